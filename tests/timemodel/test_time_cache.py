"""The planner's cache of time-model answers (``usage._estimate_time``) answers only the very
function it was asked of: the fit tool swaps in the time model with candidate parameters, and a
cached answer of the shipped parameters would make every candidate look the same."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from conftest import SEED
from trainbill import usage as usage_mod
from trainbill.catalog import Catalog
from trainbill.spec import load_plan
from trainbill.timemodel import estimate_time


def test_a_swapped_in_time_function_is_never_answered_from_the_cache(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed plan's compute hours with the time model made twice as slow (every estimate's
    seconds per step doubled) must be twice the shipped answer, even right after the shipped
    answer was cached for the same inputs."""
    plan = load_plan(SEED)
    # The seed plan states its hours; a model size and tokens make the time model decide them.
    plan = plan.model_copy(
        update={
            "run": plan.run.model_copy(update={"hours": None}),
            "model": plan.model.model_copy(update={"tokens": 20e9}),
        }
    )
    shipped = usage_mod.usage_for(plan, catalog).compute.hours  # now cached

    def twice_as_slow(**kw: Any) -> Any:
        est = estimate_time(**kw)
        return replace(est, compute_hours=est.compute_hours * 2)

    monkeypatch.setattr(usage_mod, "estimate_time", twice_as_slow)
    slowed = usage_mod.usage_for(plan, catalog).compute.hours
    assert slowed == pytest.approx(2 * shipped)  # 2 × the same hours, not the cached answer
