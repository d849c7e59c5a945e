"""Savings Plans: whose commitment (existing / bought for the run), which kind, and what it covers.

Rates are the illustrative ones of ``conftest.ILLUSTRATIVE_RATES`` (the packaged catalog has no
published p5 Savings Plan rate): p5.48xlarge Compute SP 1yr $60, 3yr $45, EC2 Instance SP 1yr
$50; ml.p5.48xlarge $120 on demand, SageMaker SP 1yr $80. The plan is ``zero_hidden_plan``:
4 × p5.48xlarge for 10 h at the 2025-05-01 on-demand price $98.32, wall-clock = 10 h.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import PriceNotFoundError, SpecError
from trainbill.forecasting import Forecast, forecast
from trainbill.spec import plan_from_dict


def _forecast(catalog: Catalog, purchase: dict[str, Any], **cluster: Any) -> Forecast:
    plan = zero_hidden_plan(**cluster)
    plan["purchase"] = purchase
    return forecast(plan_from_dict(plan), catalog, today=TODAY)


def _discount(fc: Forecast) -> dict[str, float]:
    return {ln.item: ln.cost_usd for ln in fc.ledger.in_category("discount")}


def test_existing_compute_plan_charges_the_commitment_rate(commitment_catalog: Catalog) -> None:
    """Existing 1yr Compute SP: −(98.32 − 60) × 4 × 10 = −$1,532.80; the run costs 4 × 10 × $60 =
    $2,400."""
    fc = _forecast(commitment_catalog, {"savings_plan": "1yr", "commitment": "existing"})
    assert _discount(fc) == {"1yr Compute Savings Plan on p5.48xlarge": pytest.approx(-1532.80)}
    assert fc.total_usd == pytest.approx(2400.0)
    (line,) = fc.ledger.in_category("discount")
    assert "existing commitment" in line.basis
    assert "sunk or shared" in line.basis


def test_bought_compute_plan_charges_its_whole_term(commitment_catalog: Catalog) -> None:
    """Bought 1yr Compute SP: $60 × 4 = $240/h for 8,760 h = $2,102,400; unused 8,750 h × $240 =
    $2,100,000."""
    fc = _forecast(commitment_catalog, {"savings_plan": "1yr"})  # commitment defaults to "buy"
    d = _discount(fc)
    assert d["1yr Compute Savings Plan on p5.48xlarge"] == pytest.approx(-1532.80)
    assert d["1yr Compute Savings Plan: unused commitment"] == pytest.approx(240.0 * 8750)
    assert fc.total_usd == pytest.approx(240.0 * 8760)


def test_bought_three_year_plan_charges_three_years(commitment_catalog: Catalog) -> None:
    """Bought 3yr Compute SP: $45 × 4 = $180/h for 3 × 8,760 = 26,280 h = $4,730,400."""
    fc = _forecast(commitment_catalog, {"savings_plan": "3yr"})
    assert fc.total_usd == pytest.approx(180.0 * 26_280)


def test_run_just_past_the_term_runs_its_tail_on_demand(commitment_catalog: Catalog) -> None:
    """9,000 h on a bought 1yr plan ($60 per node-hour committed, $98.32 on demand: ratio
    0.61): one 8,760 h term, and the last 240 h (0.03 of a term) on demand. Bill: 8,760 h ×
    $240/h + 240 h × 4 × $98.32 = $2,102,400 + $94,387.20 = $2,196,787.20. (Was: a second whole
    term, 17,520 h × $240 = $4,204,800.)"""
    plan = zero_hidden_plan()
    plan["run"] = {"name": "long", "hours": 9000}
    plan["purchase"] = {"savings_plan": "1yr"}
    fc = forecast(plan_from_dict(plan), commitment_catalog, today=TODAY)
    assert fc.usage.wall_hours == pytest.approx(9000)
    assert _discount(fc).get("1yr Compute Savings Plan: unused commitment", 0.0) == 0.0
    assert fc.total_usd == pytest.approx(240.0 * 8_760 + 240 * 4 * 98.32)


def test_partial_coverage_buys_a_smaller_commitment(commitment_catalog: Catalog) -> None:
    """50% coverage of 50% on-demand of 4 nodes = 1 covered node: $60/h commitment.

    Bill: on-demand 2 nodes × 10 h × $98.32 = $1,966.40 plus spot 2 × 10 × $25.66 = $513.20,
    discount −(98.32 − 60) × 1 × 10 = −$383.20, unused $60 × 8,750 = $525,000.
    """
    fc = _forecast(
        commitment_catalog,
        {"spot_fraction": 0.5, "savings_plan": "1yr", "savings_plan_coverage": 0.5},
    )
    assert fc.total_usd == pytest.approx(1966.40 + 513.20 - 383.20 + 525_000.0)


def test_ec2_instance_plan_is_cheaper_than_compute(commitment_catalog: Catalog) -> None:
    """EC2 Instance SP 1yr $50: existing 4 × 10 × $50 = $2,000; bought $200/h × 8,760 h =
    $1,752,000."""
    existing = _forecast(
        commitment_catalog,
        {"savings_plan": "1yr", "savings_plan_kind": "ec2-instance", "commitment": "existing"},
    )
    assert existing.total_usd == pytest.approx(2000.0)
    bought = _forecast(
        commitment_catalog, {"savings_plan": "1yr", "savings_plan_kind": "ec2-instance"}
    )
    assert bought.total_usd == pytest.approx(200.0 * 8760)


def test_sagemaker_plan_on_hyperpod(commitment_catalog: Catalog) -> None:
    """HyperPod bills ml.p5.48xlarge: EC2 4 × 10 × $98.32 = $3,932.80 + premium 40 × ($120 − $98.32)
    = $867.20; SageMaker SP (default kind on HyperPod) −40 × ($120 − $80) = −$1,600:
    $3,200 = 40 × $80. Bought instead: + $320/h × 8,750 h unused = $2,803,200 = $320 × 8,760."""
    existing = _forecast(
        commitment_catalog,
        {"savings_plan": "1yr", "commitment": "existing"},
        orchestrator="hyperpod",
    )
    assert existing.ledger.by_category()["orchestration"] == pytest.approx(867.20)
    assert _discount(existing) == {
        "1yr SageMaker Savings Plan on ml.p5.48xlarge": pytest.approx(-1600.0)
    }
    assert existing.total_usd == pytest.approx(3200.0)
    bought = _forecast(commitment_catalog, {"savings_plan": "1yr"}, orchestrator="hyperpod")
    assert bought.total_usd == pytest.approx(320.0 * 8760)


def test_hyperpod_without_a_published_ml_price_warns(catalog: Catalog) -> None:
    """A catalog with no ml.* price (none to derive one from either): no premium line (no 20%
    guess), and a warning. (The packaged catalog now has ml.* rates: they are removed here.)"""
    catalog = replace(catalog, prices=tuple(p for p in catalog.prices if "ml." not in p.item))
    fc = _forecast(catalog, {}, orchestrator="hyperpod")
    assert fc.ledger.by_category()["orchestration"] == 0.0
    assert fc.total_usd == pytest.approx(4 * 10 * 98.32)
    assert any("no published SageMaker ml.p5.48xlarge price" in w for w in fc.warnings)


def test_hyperpod_spot_is_allowed_and_said(commitment_catalog: Catalog) -> None:
    """HyperPod supports Spot from 2025-11-26 (orchestration.hyperpod_spot_from); this plan is
    dated 2025-05-01, before it, so its spot half is priced on demand (a dated rule, not a
    refusal) and the premium covers all 4 nodes: 4 × 10 h × ($120 − $98.32) = $867.20 (it was
    2 nodes, $433.60, before the rule), and a warning names the field and both dates."""
    fc = _forecast(commitment_catalog, {"spot_fraction": 0.5}, orchestrator="hyperpod")
    assert fc.ledger.by_category()["orchestration"] == pytest.approx(4 * 10 * (120 - 98.32))
    (note,) = [w for w in fc.warnings if "purchase.spot_fraction = 0.5 on HyperPod" in w]
    assert "before HyperPod offered Spot" in note
    assert "2025-05-01" in note


def test_no_published_rate_is_an_error_not_a_guess(catalog: Catalog) -> None:
    """p3dn.24xlarge has no commitment rate of any kind (nor a Convertible RI proxy) in the
    packaged catalog: an error, never a claimed discount (the article's 42%)."""
    with pytest.raises(
        PriceNotFoundError, match=r"no published 1yr Compute Savings Plan rate for p3dn\.24xlarge"
    ):
        _forecast(catalog, {"savings_plan": "1yr"}, instance="p3dn.24xlarge")


@pytest.mark.parametrize(
    ("purchase", "cluster", "field", "would"),
    [
        (
            {"savings_plan_kind": "ec2-instance", "savings_plan_family": "p4d"},
            {},
            "savings_plan_family",
            "a Compute Savings Plan would",
        ),
        # The article's "switching to Trainium loses the discount": a p5 EC2 Instance plan on trn1.
        (
            {"savings_plan_kind": "ec2-instance", "savings_plan_family": "p5"},
            {"instance": "trn1.32xlarge"},
            "savings_plan_family",
            "a Compute Savings Plan would",
        ),
        (
            {"savings_plan_kind": "sagemaker"},
            {},
            "savings_plan_kind",
            "a Compute Savings Plan would",
        ),
        (
            {"savings_plan_kind": "compute"},
            {"orchestrator": "hyperpod"},
            "savings_plan_kind",
            "a SageMaker Savings Plan would",
        ),
        (
            {"savings_plan_kind": "compute"},
            {"provider": "gcp", "instance": "tpu-v6e"},
            "savings_plan_kind",
            "do not apply on gcp",
        ),
    ],
)
def test_kind_that_does_not_cover_the_usage_names_the_one_that_would(
    commitment_catalog: Catalog,
    purchase: dict[str, Any],
    cluster: dict[str, Any],
    field: str,
    would: str,
) -> None:
    """A Savings Plan kind that cannot cover the plan's instances is an error naming the field and
    the kind that would."""
    with pytest.raises(SpecError, match=would) as err:
        _forecast(commitment_catalog, {"savings_plan": "1yr", **purchase}, **cluster)
    assert err.value.field == f"purchase.{field}"


def test_compute_plan_covers_trainium(commitment_catalog: Catalog) -> None:
    """A Compute SP covers trn1 (illustrative $15): existing, 4 × 10 h × $15 = $600 at as_of
    2025-07-01."""
    plan = zero_hidden_plan(instance="trn1.32xlarge")
    plan["prices"] = {"as_of": "2025-07-01"}
    plan["purchase"] = {"savings_plan": "1yr", "commitment": "existing"}
    fc = forecast(plan_from_dict(plan), commitment_catalog, today=TODAY)
    assert fc.total_usd == pytest.approx(600.0)


def test_missing_rate_error_names_the_commitment_rates_that_do_exist(tmp_path: Any) -> None:
    """Only a later 3-yr EC2 Instance rate exists for p3dn (tiny overlay; the packaged catalog has
    no commitment rate for it): the 1-yr Compute error says so."""
    from trainbill.catalog import load_catalog

    (tmp_path / "prices.csv").write_text(
        "provider,region,item,option,unit,usd,effective_from,source\n"
        "aws,us-east-1,p3dn.24xlarge,sp_3yr,instance-hour,10.0,2026-01-01,test quote\n",
        encoding="utf-8",
    )
    cat = load_catalog([tmp_path])
    with pytest.raises(
        PriceNotFoundError, match=r"for p3dn\.24xlarge: sp_3yr in us-east-1 from 2026-01-01"
    ):
        _forecast(cat, {"savings_plan": "1yr"}, instance="p3dn.24xlarge")


def test_tpu_savings_plan_line_is_in_chip_hours(commitment_catalog: Catalog) -> None:
    """TPUs are billed per chip-hour, so the commitment discount on them is too (was
    "instance-hour").

    tpu-v6e: 1 chip per node, $2.70/chip-hour on demand; illustrative 1-year commitment rate
    $1.89 (conftest), so the line saves $2.70 − $1.89 = $0.81 per chip-hour on 8 chips × 1.0
    coverage × wall hours.
    """
    catalog = commitment_catalog
    plan = plan_from_dict({
        "run": {"hours": 10},
        "cluster": {"provider": "gcp", "instance": "tpu-v6e", "nodes": 8},
        "purchase": {"savings_plan": "1yr", "savings_plan_coverage": 1.0, "commitment": "existing"},
        "prices": {"as_of": date(2025, 7, 1)},
    })  # fmt: skip
    fc = forecast(plan, catalog, today=TODAY)
    (compute,) = fc.ledger.in_category("compute")
    (disc,) = fc.ledger.in_category("discount")
    assert compute.unit == "chip-hour"
    assert disc.unit == "chip-hour"
    assert "per chip-hour" in disc.basis
    assert disc.unit_price_usd == pytest.approx(-(2.70 - 1.89))  # -$0.81
    assert disc.quantity == pytest.approx(1.0 * 8 * fc.usage.wall_hours)
