"""The CLI runner under its older import name; it lives in ``tests/conftest.py``.

Kept so test files that still write ``from cli_runner import run_cli`` (bills, report, profile,
web) run unchanged; new tests import from ``conftest`` or use the ``cli`` fixture.
"""

from __future__ import annotations

from conftest import run_argv, run_cli

__all__ = ["run_argv", "run_cli"]
