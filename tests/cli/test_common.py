"""Helpers shared by the command modules (``trainbill.cli._common``)."""

from __future__ import annotations

import math

import pytest


def test_finite_option_helper() -> None:
    """The shared check behind --deadline-hours/--budget-usd: finite and > 0, else SpecError."""
    from trainbill.cli._common import finite_option
    from trainbill.errors import SpecError

    assert finite_option(None, "--x") is None
    assert finite_option(2.5, "--x") == 2.5
    for bad in (math.nan, math.inf, -math.inf, 0.0, -1.0):
        with pytest.raises(SpecError, match="--x"):
            finite_option(bad, "--x")
