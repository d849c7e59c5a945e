"""Discount driver: the Savings Plan line on covered on-demand hours, and a bought plan's unused
term, on round tiny prices ($10 on-demand, $6 commitment rate per instance-hour)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog, Provenance
from trainbill.costs import discount
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for


def _usage(catalog: Catalog, cluster: dict[str, Any] | None = None, **purchase: Any) -> Usage:
    """4 × p5.48xlarge, a stated 10 h, every hidden cost off (wall-clock = 10 h)."""
    plan = zero_hidden_plan(**(cluster or {}))
    plan["purchase"] = purchase
    return usage_for(plan_from_dict(plan), catalog, today=TODAY)


def _tiny(catalog: Catalog) -> Catalog:
    """p5.48xlarge: $10 on-demand, $6 (1yr) and $5 (3yr) Compute Savings Plan, $4 spot."""
    return tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("p5.48xlarge", "spot", "instance-hour", 4.0),
        price("p5.48xlarge", "compute_sp_1yr", "instance-hour", 6.0),
        price("p5.48xlarge", "compute_sp_3yr", "instance-hour", 5.0),
    )


def _lines(usage: Usage, catalog: Catalog) -> list[Charge]:
    return list(discount.price(usage, catalog))


def test_existing_commitment_charges_only_the_rate_on_the_runs_hours(catalog: Catalog) -> None:
    """50 % coverage × 4 nodes = 2 covered nodes × 10 h = 20 h at −($10 − $6) = −$80;
    no term line."""
    usage = _usage(catalog, savings_plan="1yr", savings_plan_coverage=0.5, commitment="existing")
    (line,) = _lines(usage, _tiny(catalog))
    assert line.item == "1yr Compute Savings Plan on p5.48xlarge"
    assert line.quantity == pytest.approx(20.0)
    assert line.unit_price_usd == pytest.approx(-4.0)
    assert line.cost_usd == pytest.approx(-80.0)
    assert "existing commitment" in line.basis()


def test_bought_commitment_charges_its_unused_term(catalog: Catalog) -> None:
    """Bought for the run: −$80 as above, plus 2 nodes × $6 = $12/h over 8,760 h − 10 h used =
    8,750 h = $105,000."""
    usage = _usage(catalog, savings_plan="1yr", savings_plan_coverage=0.5, commitment="buy")
    saving, unused = _lines(usage, _tiny(catalog))
    assert saving.cost_usd == pytest.approx(-80.0)
    assert unused.item == "1yr Compute Savings Plan: unused commitment"
    assert unused.unit == "hour"
    assert unused.quantity == pytest.approx(8750.0)  # 365 × 24 = 8,760 h in the term
    assert unused.unit_price_usd == pytest.approx(12.0)
    assert unused.cost_usd == pytest.approx(105_000.0)


def test_three_year_term_and_spot_share(catalog: Catalog) -> None:
    """3yr, full coverage of the 50 % on-demand share: 1 × 50 % × 4 = 2 nodes × 10 h = 20 h at
    −($10 − $5) = −$100; unused 3 × 8,760 − 10 = 26,270 h × (2 × $5) = $262,700."""
    usage = _usage(catalog, savings_plan="3yr", savings_plan_coverage=1.0, spot_fraction=0.5)
    saving, unused = _lines(usage, _tiny(catalog))
    assert saving.quantity == pytest.approx(20.0)
    assert saving.cost_usd == pytest.approx(-100.0)
    assert unused.quantity == pytest.approx(26_270.0)
    assert unused.cost_usd == pytest.approx(262_700.0)


def test_run_longer_than_a_term_buys_another_only_when_it_pays(catalog: Catalog) -> None:
    """The commitment is 2 covered nodes × $6 = $12/h against $10 per node-hour on demand
    (ratio 0.6). 10,000 h: one 8,760 h term, and the last 1,240 h (0.14 of a term < 0.6) run
    on demand: a second term ($12 × 8,760 = $105,120) would cost more than the 2 × 1,240 h ×
    $10 = $24,800 those hours cost on demand. Covered 2 × 8,760 node-hours, nothing unused.
    (Was: 2 terms, 7,520 h × $12 = $90,240 unused.) 16,000 h: the last 7,240 h (0.83 of a
    term) buy the second term: 17,520 − 16,000 = 1,520 h × $12 = $18,240 unused."""
    tiny = _tiny(catalog)
    usage = _usage(catalog, savings_plan="1yr", savings_plan_coverage=0.5)
    saving, unused = _lines(usage.with_values({"compute.hours": 10_000.0}), tiny)
    assert saving.quantity == pytest.approx(2 * 8_760.0)
    assert unused.quantity == pytest.approx(0.0)
    saving, unused = _lines(usage.with_values({"compute.hours": 16_000.0}), tiny)
    assert saving.quantity == pytest.approx(2 * 16_000.0)
    assert unused.quantity == pytest.approx(1_520.0)
    assert unused.cost_usd == pytest.approx(18_240.0)


@pytest.mark.parametrize(
    "purchase",
    [
        {"savings_plan": "none"},
        {"savings_plan": "1yr", "savings_plan_coverage": 0.0},
        {"savings_plan": "1yr", "savings_plan_coverage": 1.0, "spot_fraction": 1.0},
    ],
    ids=["no-plan", "zero-coverage", "all-spot"],
)
def test_nothing_covered_gives_no_lines(catalog: Catalog, purchase: dict[str, Any]) -> None:
    """No plan, zero coverage, or no on-demand hours to cover: no discount line at all."""
    assert _lines(_usage(catalog, **purchase), _tiny(catalog)) == []


def test_sagemaker_plan_discounts_the_ml_price(catalog: Catalog) -> None:
    """HyperPod: the SageMaker plan covers ml.p5.48xlarge: 4 × 10 h = 40 h at
    −($12 − $7) = −$200."""
    tiny = tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("ml.p5.48xlarge", "on_demand", "instance-hour", 12.0),
        price("ml.p5.48xlarge", "sagemaker_sp_1yr", "instance-hour", 7.0),
    )
    usage = _usage(
        catalog,
        {"orchestrator": "hyperpod"},
        savings_plan="1yr",
        savings_plan_coverage=1.0,
        commitment="existing",
    )
    (line,) = _lines(usage, tiny)
    assert line.item == "1yr SageMaker Savings Plan on ml.p5.48xlarge"
    assert line.quantity == pytest.approx(40.0)
    assert line.cost_usd == pytest.approx(-200.0)


def test_only_the_unused_term_is_billed_after_the_run(catalog: Catalog) -> None:
    """The covered hours are billed with the run; the unused term after it (``after_run``, which
    the spend calendar reads). Both are priced at published rates."""
    usage = _usage(catalog, savings_plan="1yr", savings_plan_coverage=0.5, commitment="buy")
    saving, unused = _lines(usage, _tiny(catalog))
    assert (saving.after_run, unused.after_run) == (False, True)
    assert saving.provenance is unused.provenance is Provenance.PUBLISHED
