"""Compute driver: pure-training instance-hours split by purchase option, on round tiny prices."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import compute
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for


def _usage(catalog: Catalog, **cluster: Any) -> Usage:
    """4 × p5.48xlarge for a stated 10 h of training, every hidden cost off (compute = 10 h)."""
    plan = zero_hidden_plan(**cluster)
    if "spot_fraction" in cluster:
        plan["purchase"] = {"spot_fraction": plan["cluster"].pop("spot_fraction")}
    return usage_for(plan_from_dict(plan), catalog, today=TODAY)


def _tiny(catalog: Catalog) -> Catalog:
    """$10 per instance-hour on-demand, $4 spot for p5.48xlarge."""
    return tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("p5.48xlarge", "spot", "instance-hour", 4.0),
    )


def _lines(usage: Usage, catalog: Catalog) -> list[Charge]:
    return list(compute.price(usage, catalog))


def test_all_on_demand_is_one_line(catalog: Catalog) -> None:
    """No spot: one on-demand line, 4 nodes × 10 h = 40 instance-hours × $10 = $400."""
    usage = _usage(catalog)
    assert usage.compute.hours == pytest.approx(10.0)
    (line,) = _lines(usage, _tiny(catalog))
    assert line.item == "p5.48xlarge on-demand"
    assert line.unit == "instance-hour"
    assert line.quantity == pytest.approx(40.0)
    assert line.unit_price_usd == 10.0
    assert line.cost_usd == pytest.approx(400.0)
    assert line.pricing_category == "Standard"


def test_part_spot_splits_the_node_hours(catalog: Catalog) -> None:
    """25 % spot: 4 × 75 % × 10 h = 30 h × $10 = $300 on-demand;
    4 × 25 % × 10 h = 10 h × $4 = $40 spot."""
    od, spot = _lines(_usage(catalog, spot_fraction=0.25), _tiny(catalog))
    assert (od.item, od.quantity, od.unit_price_usd) == ("p5.48xlarge on-demand", 30.0, 10.0)
    assert od.cost_usd == pytest.approx(300.0)
    assert (spot.item, spot.quantity, spot.unit_price_usd) == ("p5.48xlarge spot", 10.0, 4.0)
    assert spot.cost_usd == pytest.approx(40.0)
    assert spot.pricing_category == "Dynamic"


def test_all_spot_has_no_on_demand_line(catalog: Catalog) -> None:
    """100 % spot: only a spot line, 4 × 10 h = 40 h × $4 = $160 (no on-demand price needed)."""
    spot_only = tiny_catalog(catalog, price("p5.48xlarge", "spot", "instance-hour", 4.0))
    (line,) = _lines(_usage(catalog, spot_fraction=1.0), spot_only)
    assert line.item == "p5.48xlarge spot"
    assert line.quantity == pytest.approx(40.0)
    assert line.cost_usd == pytest.approx(160.0)


def test_spot_price_scale_multiplies_only_the_spot_rate(catalog: Catalog) -> None:
    """A trial's spot price at 1.5 × list: spot $4 × 1.5 = $6; on-demand stays $10
    (half spot: 20 h each)."""
    usage = _usage(catalog, spot_fraction=0.5).with_values({"purchase.spot_price_scale": 1.5})
    od, spot = _lines(usage, _tiny(catalog))
    assert od.unit_price_usd == 10.0
    assert spot.unit_price_usd == pytest.approx(6.0)
    assert spot.cost_usd == pytest.approx(20.0 * 6.0)  # 4 × 50 % × 10 h = 20 h


def test_instance_without_on_demand_sku_is_priced_at_its_capacity_block_rate(
    catalog: Catalog,
) -> None:
    """p5e.48xlarge has no On-Demand SKU: its non-spot 4 × 10 h = 40 h at the $30 Capacity
    Block rate = $1,200."""
    cb = tiny_catalog(catalog, price("p5e.48xlarge", "capacity_block", "instance-hour", 30.0))
    (line,) = _lines(_usage(catalog, instance="p5e.48xlarge"), cb)
    assert line.item == "p5e.48xlarge Capacity Block"
    assert line.quantity == pytest.approx(40.0)
    assert line.unit_price_usd == 30.0
    assert line.cost_usd == pytest.approx(1200.0)
    assert line.pricing_category == "Committed"


def test_tpu_is_billed_per_chip_hour(catalog: Catalog) -> None:
    """tpu-v6e (one chip a node, billed per chip): 4 chips × 10 h = 40 chip-hours × $2 = $80."""
    tpu = tiny_catalog(
        catalog,
        price("tpu-v6e", "on_demand", "chip-hour", 2.0, provider="gcp", region="us-central1"),
    )
    (line,) = _lines(_usage(catalog, instance="tpu-v6e", provider="gcp", region="us-central1"), tpu)
    assert line.unit == "chip-hour"
    assert line.quantity == pytest.approx(40.0)
    assert line.cost_usd == pytest.approx(80.0)
