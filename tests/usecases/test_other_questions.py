"""The remaining use cases against the engine path: report data and ledger, diff, a claimed
bill's audit, the rule of thumb, commitment advice, a cluster import."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from conftest import BILLS_OVERHEADS_TOML, SEED, TODAY, zero_hidden_plan
from trainbill.calibration import calibrate_catalog, parse_calibration
from trainbill.catalog import Catalog
from trainbill.claims import audit_claims, claims_from_dict
from trainbill.commit import advise_commitment as engine_advice
from trainbill.commit import parse_usage_csv
from trainbill.diff import diff_forecasts
from trainbill.forecasting import forecast
from trainbill.headline import budget
from trainbill.spec import load_plan, plan_from_dict
from trainbill.usecases.check import audit_claims_file
from trainbill.usecases.commit import advise_commitment
from trainbill.usecases.compare import diff_plans
from trainbill.usecases.report import ledger_of
from trainbill.usecases.whatif import rule_of_thumb_check
from trainbill.whatif import rule_of_thumb


def test_ledger_of_prices_on_the_calibrated_catalog(catalog: Catalog) -> None:
    """Storage $2.00 and networking $0.50 per GPU node-hour from the bills: 4 nodes × 10 h =
    40 node-hours, so storage $80.00 and networking $20.00."""
    plan = plan_from_dict(zero_hidden_plan())
    cals = [parse_calibration(BILLS_OVERHEADS_TOML, source="b.toml")]
    fc = ledger_of(plan, catalog, cals, today=TODAY)
    assert fc.as_dict() == forecast(plan, calibrate_catalog(catalog, cals), today=TODAY).as_dict()
    assert fc.ledger.by_category()["storage"] == pytest.approx(4 * 10 * 2.0)
    assert fc.ledger.by_category()["networking"] == pytest.approx(4 * 10 * 0.5)


def test_diff_plans_is_diff_forecasts(catalog: Catalog) -> None:
    base = plan_from_dict(zero_hidden_plan())
    new = plan_from_dict(zero_hidden_plan(nodes=8))
    d = diff_plans(base, new, catalog, base_name="a", new_name="b")
    expected = diff_forecasts(forecast(base, catalog), forecast(new, catalog), base, new,
                              base_name="a", new_name="b")  # fmt: skip
    assert d.as_dict() == expected.as_dict()
    # 8 nodes for the same 10 h bill twice the quote: +4 × 10 h × rate.
    assert d.total.delta == pytest.approx(forecast(base, catalog).total_usd)


def test_audit_claims_file_is_audit_claims(catalog: Catalog, tmp_path: Path) -> None:
    f = tmp_path / "claims.toml"
    f.write_text(
        f'plan = "{SEED}"\nquote_usd = 226529.28\n[[lines]]\ncategory = "storage"\n'
        "amount_usd = 3000\n",
        encoding="utf-8",
    )
    audit = audit_claims_file(f, catalog)
    claim = claims_from_dict(
        {"quote_usd": 226529.28, "lines": [{"category": "storage", "amount_usd": 3000}]},
        source=str(f),
    )
    expected = audit_claims(claim, forecast(load_plan(SEED), catalog), catalog)
    assert audit.as_dict() == expected.as_dict()


def test_rule_of_thumb_check_base_is_the_quote(catalog: Catalog) -> None:
    """The rule's base is the forecast's quote: 4 × 10 h × the on-demand rate."""
    plan = plan_from_dict(zero_hidden_plan())
    rate = catalog.price("p5.48xlarge", "on_demand", provider="aws", region="us-east-1",
                         as_of=date(2025, 5, 1)).usd  # fmt: skip
    checked = rule_of_thumb_check(plan, catalog)
    fc = forecast(plan, catalog)
    b, _ = budget(fc, catalog, deadline_hours=plan.run.deadline_hours)
    assert checked.budget == b
    assert checked.rule == rule_of_thumb(fc, catalog, budget_usd=b.usd)
    assert checked.rule.base_usd == pytest.approx(4 * 10 * rate)
    assert checked.rule.base_usd == fc.quote_usd


def test_commitment_advice_reads_the_file(catalog: Catalog, tmp_path: Path) -> None:
    text = "month,gpu_hours\n2025-01,800\n2025-02,900\n2025-03,1000\n"
    f = tmp_path / "usage.csv"
    f.write_text(text, encoding="utf-8")
    as_of = date(2025, 5, 1)
    got = advise_commitment(f, catalog, instance="p5.48xlarge", as_of=as_of)
    want = engine_advice(parse_usage_csv(text, source=str(f)), catalog, instance="p5.48xlarge",
                         as_of=as_of)  # fmt: skip
    assert got.as_dict() == want.as_dict()
    assert got.baseline_gpu_hours == 800.0  # the lowest month


def test_report_data_is_analyse_on_the_calibrated_catalog(catalog: Catalog) -> None:
    from trainbill.analysis import analyse
    from trainbill.usecases.report import report_data

    plan = plan_from_dict(zero_hidden_plan())
    cals = [parse_calibration(BILLS_OVERHEADS_TOML, source="b.toml")]
    data = report_data(plan, catalog, cals, trials=200, seed=3, today=TODAY)
    want = analyse(plan, calibrate_catalog(catalog, cals), today=TODAY, trials=200, seed=3)
    assert data.forecast.as_dict() == want.forecast.as_dict()
    assert data.outlook == want.outlook
    assert data.simulation == want.simulation
    # The headline's budget is the risk section's simulation (200 trials, seed 3): one P90.
    assert data.outlook is not None
    assert data.outlook.budget is not None
    assert data.simulation is not None
    assert data.outlook.budget.p90_usd == data.simulation.p90_usd
    none = report_data(plan, catalog, trials=0, today=TODAY)
    assert none.simulation is None
