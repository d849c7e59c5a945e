"""The plan as written is checked with the usage its candidate is priced from: a plan whose
forecast is refused (its wall-clock past ``forecast.MAX_WALL_HOURS``) is refused by the search
with the forecast's own error, and a computable one is its own candidate at the forecast's
total."""

from __future__ import annotations

import pytest

from conftest import SEED, TODAY
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import forecast
from trainbill.optimize import SearchSpace, optimize
from trainbill.spec import load_plan

ONE = SearchSpace(
    instances=("p5.48xlarge",), nodes=(32,), orchestrators=("ec2",), savings_plans=("none",)
)


def test_a_plan_the_forecast_refuses_is_refused_alike(catalog: Catalog) -> None:
    plan = load_plan(SEED)
    # 1e6 h of training (the cap), and a year (8,766 h, the cap) to recover from each failure:
    # failures and checkpoint stalls take the wall-clock over forecast's 1e6 h
    rel = plan.reliability.model_copy(update={"restart_hours": 8_766.0})
    run = plan.run.model_copy(update={"hours": 1e6})
    bad = plan.model_copy(update={"reliability": rel, "run": run})
    with pytest.raises(SpecError) as by_forecast:
        forecast(bad, catalog, today=TODAY)
    with pytest.raises(SpecError) as by_search:
        optimize(bad, catalog, space=ONE, today=TODAY)
    assert str(by_search.value) == str(by_forecast.value)
    assert "wall-clock" in str(by_search.value)


def test_the_plans_candidate_costs_its_forecast(catalog: Catalog) -> None:
    plan = load_plan(SEED)
    r = optimize(plan, catalog, space=ONE, today=TODAY)
    assert r.user is not None
    fc = forecast(plan, catalog, today=TODAY)
    assert r.user.total_usd == pytest.approx(fc.total_usd, rel=1e-12)
    assert r.user.wall_hours == fc.usage.wall_hours
