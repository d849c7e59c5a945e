"""``price_plan``: the forecast and, beside it, its outlook, the same as the engine path it
replaced in the CLI and the web app (forecast or forecast_calibrated, then the outlook priced on
the calibrated catalog with the same calibrations)."""

from __future__ import annotations

from datetime import date

import pytest

from conftest import BILLS_OVERHEADS_TOML, PROFILE_TOML, SEED, TODAY, zero_hidden_plan
from trainbill.calibration import calibrate_catalog, forecast_calibrated, parse_calibration
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import Forecast, forecast
from trainbill.headline import outlook_of
from trainbill.spec import load_plan, plan_from_dict
from trainbill.usecases.price import forecast_plan, price_plan, size_plan

AS_OF = date(2025, 5, 1)


def test_zero_hidden_plan_costs_its_quote_by_hand(catalog: Catalog) -> None:
    """4 × p5.48xlarge × 10 h at the on-demand rate, nothing hidden: real bill = quote =
    4 × 10 × rate, and the outlook's budget is never below it."""
    rate = catalog.price("p5.48xlarge", "on_demand", provider="aws", region="us-east-1",
                         as_of=AS_OF).usd  # fmt: skip
    priced = price_plan(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    assert priced.forecast.quote_usd == pytest.approx(4 * 10 * rate)
    assert priced.forecast.total_usd == pytest.approx(4 * 10 * rate)
    assert priced.outlook is not None
    assert priced.outlook.budget is not None
    assert priced.outlook.budget.usd >= priced.forecast.total_usd


def test_the_seed_is_priced_as_the_engine_prices_it(catalog: Catalog) -> None:
    plan = load_plan(SEED)
    fc = forecast(plan, catalog, today=TODAY)
    outlook = outlook_of(plan, fc, catalog, today=TODAY)
    priced = price_plan(plan, catalog, today=TODAY)
    assert priced.forecast.as_dict() == fc.as_dict()
    assert priced.outlook == outlook
    doc = priced.as_dict()
    # The outlook's keys sit where the forecast document has them (null there), filled in.
    assert list(doc) == list(fc.as_dict())
    assert outlook.budget is not None
    assert doc["budget_usd"] == outlook.budget.usd
    assert doc["actions"] == [a.as_dict() for a in outlook.actions]
    assert doc["waterfall"][-1]["end"] == outlook.budget.usd
    assert fc.as_dict()["budget_usd"] is None


def test_calibrations_are_applied_once_as_before(catalog: Catalog) -> None:
    """A profile (measured MFU) and a bills calibration: the forecast is forecast_calibrated's,
    the outlook is priced on the calibrated catalog with the same calibrations."""
    plan = plan_from_dict(
        {
            "run": {"deadline_hours": 500},
            "model": {"params": 7e9, "tokens": 1e11},
            "cluster": {"instance": "p5.48xlarge", "nodes": 8},
            "prices": {"as_of": "2025-05-01"},
        }
    )
    cals = [
        parse_calibration(PROFILE_TOML, source="profile.toml"),
        parse_calibration(BILLS_OVERHEADS_TOML, source="bills.toml"),
    ]
    fc = forecast_calibrated(plan, catalog, cals, today=TODAY)
    outlook = outlook_of(plan, fc, calibrate_catalog(catalog, cals), today=TODAY, calibrations=cals)
    priced = price_plan(plan, catalog, cals, today=TODAY)
    assert priced.forecast.as_dict() == fc.as_dict()
    assert priced.outlook == outlook
    # And not the uncalibrated bill: the calibrations moved it.
    assert priced.forecast.total_usd != pytest.approx(forecast(plan, catalog).total_usd)


def test_without_outlook_and_the_check_runs_first(catalog: Catalog) -> None:
    plan = plan_from_dict(zero_hidden_plan())
    assert price_plan(plan, catalog, outlook=False).outlook is None
    seen: list[Forecast] = []

    def refuse(fc: Forecast) -> None:
        seen.append(fc)
        raise SpecError("too large", field="plan")

    with pytest.raises(SpecError, match="too large"):
        price_plan(plan, catalog, check=refuse)
    assert len(seen) == 1


def test_a_rule_error_names_the_plan_source(catalog: Catalog) -> None:
    """Checkpoints to an FSx of 0 GB (a rule the usage checks, not the plan's reader): the
    error names the field, and the source the front end gave (the plan file, or "command
    line")."""
    raw = zero_hidden_plan()
    raw["checkpoint"] = {"target": "fsx"}
    plan = plan_from_dict(raw)
    with pytest.raises(SpecError) as bare:
        forecast(plan, catalog)
    with pytest.raises(SpecError) as named:
        forecast_plan(plan, catalog, source="plan.toml")
    assert bare.value.source is None
    assert named.value.source == "plan.toml"
    assert named.value.field == bare.value.field == "checkpoint.target"


def test_size_plan_is_the_sweep(catalog: Catalog) -> None:
    from trainbill.sizing import pareto_front, right_sizing

    plan = plan_from_dict(zero_hidden_plan())
    points, basis = right_sizing(plan, catalog, today=TODAY)
    sized = size_plan(plan, catalog, today=TODAY)
    assert sized.points == points
    assert sized.basis == basis
    assert sized.front == pareto_front(points)
