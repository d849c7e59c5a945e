"""Evaluation driver: forward-only validation hours at the blended cluster rate, on round tiny
prices ($10 on-demand, $4 spot per instance-hour)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import evaluation
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for


def _usage(catalog: Catalog, evaluate: dict[str, Any], spot_fraction: float = 0.0) -> Usage:
    """4 × p5.48xlarge, a stated 10 h with no model size (an eval step is a plain third of a
    step)."""
    plan = zero_hidden_plan()
    plan["evaluation"] = evaluate
    plan["purchase"] = {"spot_fraction": spot_fraction}
    return usage_for(plan_from_dict(plan), catalog, today=TODAY)


def _tiny(catalog: Catalog) -> Catalog:
    return tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("p5.48xlarge", "spot", "instance-hour", 4.0),
    )


def _lines(usage: Usage, catalog: Catalog) -> list[Charge]:
    return list(evaluation.price(usage, catalog))


def test_on_demand_evaluation_hours(catalog: Catalog) -> None:
    """50 eval steps every 500: 10 h × 50/500 × 1/3 = 1/3 h × (4 nodes × $10) = $13.33."""
    (line,) = _lines(_usage(catalog, {"interval_steps": 500, "steps": 50}), _tiny(catalog))
    assert line.item == "validation passes (forward only)"
    assert line.unit == "cluster-hour"
    assert line.quantity == pytest.approx(1 / 3)
    assert line.unit_price_usd == pytest.approx(40.0)
    assert line.cost_usd == pytest.approx(40 / 3)


def test_evaluation_is_billed_at_the_blended_spot_rate(catalog: Catalog) -> None:
    """100 every 1,000, 75 % spot: 10 × 0.1 / 3 = 1/3 h × 4 × (¼ × $10 + ¾ × $4) = $22/h → $7.33."""
    usage = _usage(catalog, {"interval_steps": 1000, "steps": 100}, spot_fraction=0.75)
    (line,) = _lines(usage, _tiny(catalog))
    assert line.quantity == pytest.approx(1 / 3)
    assert line.unit_price_usd == pytest.approx(22.0)
    assert line.cost_usd == pytest.approx(22 / 3)


def test_no_evaluation_gives_no_line(catalog: Catalog) -> None:
    """``interval_steps = 0`` turns evaluation off: no line (and no price is looked up)."""
    assert _lines(_usage(catalog, {"interval_steps": 0}), tiny_catalog(catalog)) == []


def test_all_spot_evaluation_needs_no_on_demand_price(catalog: Catalog) -> None:
    """100 % spot with only a spot price in the catalog (as for an instance sold only on spot or
    by Capacity Block): 1/3 h × 4 nodes × $4 = $5.33, no on-demand look-up."""
    spot_only = tiny_catalog(catalog, price("p5.48xlarge", "spot", "instance-hour", 4.0))
    usage = _usage(catalog, {"interval_steps": 1000, "steps": 100}, spot_fraction=1.0)
    (line,) = _lines(usage, spot_only)
    assert line.quantity == pytest.approx(1 / 3)  # 10 h × 100/1,000 × 1/3
    assert line.unit_price_usd == pytest.approx(16.0)  # 4 nodes × $4
    assert line.cost_usd == pytest.approx(16 / 3)
