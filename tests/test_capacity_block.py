"""p5e.48xlarge: no On-Demand SKU, sold only through EC2 Capacity Blocks in us-east-2, and
priced exactly that way (REFERENCE §4.1; AWS Capacity Blocks for ML pricing page)."""

from __future__ import annotations

import pytest

from conftest import TODAY, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import PriceNotFoundError
from trainbill.forecasting import forecast
from trainbill.spec import plan_from_dict


def test_p5e_catalog_rows(catalog: Catalog) -> None:
    """8 × H200 141 GB; one sourced, dated price: the us-east-2 Capacity Block rate $43.26/h
    (the page's $5.408 per accelerator-hour × 8 = $43.264), and no on-demand or spot price."""
    inst = catalog.instance("p5e.48xlarge")
    assert (inst.accelerator, inst.accelerator_count) == ("h200", 8)
    assert catalog.accelerator("h200").hbm_gb == 141
    (point,) = catalog.history("p5e.48xlarge", "capacity_block", provider="aws", region="us-east-2")
    assert point.usd == pytest.approx(5.408 * 8, abs=0.01)
    assert "Capacity Blocks for ML Pricing" in point.source
    for region in catalog.regions("aws"):
        for option in ("on_demand", "spot"):
            assert not catalog.history("p5e.48xlarge", option, provider="aws", region=region)


def test_p5e_priced_at_its_capacity_block_rate(catalog: Catalog) -> None:
    """4 nodes × 10 h × $43.26 = $1,730.40, labelled Capacity Block (FOCUS 'Committed'); with
    every hidden rate at zero the bill is the quote."""
    fc = forecast(
        plan_from_dict(zero_hidden_plan(instance="p5e.48xlarge", region="us-east-2")),
        catalog,
        today=TODAY,
    )
    (line,) = fc.ledger.in_category("compute")
    assert line.item == "p5e.48xlarge Capacity Block"
    assert line.pricing_category == "Committed"
    assert line.cost_usd == pytest.approx(4 * 10 * 43.26)
    assert fc.quote_usd == pytest.approx(1730.40)
    assert fc.total_usd == pytest.approx(1730.40)


def test_p5e_outside_ohio_names_the_region_it_is_sold_in(catalog: Catalog) -> None:
    """us-east-1 has no p5e Capacity Blocks: one error naming us-east-2, not a borrowed price."""
    plan = plan_from_dict(zero_hidden_plan(instance="p5e.48xlarge", region="us-east-1"))
    with pytest.raises(PriceNotFoundError, match=r"only through EC2 Capacity Blocks.*us-east-2"):
        forecast(plan, catalog, today=TODAY)


def test_p5e_savings_plan_is_refused(catalog: Catalog) -> None:
    """No On-Demand price to discount: a Savings Plan on p5e is an error, not a derived rate."""
    data = zero_hidden_plan(instance="p5e.48xlarge", region="us-east-2")
    data["purchase"] = {"savings_plan": "1yr"}
    # The Savings Plans merge made every commitment rate a published one: p5e has none.
    with pytest.raises(
        PriceNotFoundError, match=r"no published 1yr Compute Savings Plan rate for p5e\.48xlarge"
    ):
        forecast(plan_from_dict(data), catalog, today=TODAY)
