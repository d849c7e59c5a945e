"""Sync stall driver on a tiny catalog: stalled hours per cause at the blended cluster rate.

EC2 is $10/node-hour, so a 4-node cluster-hour is $40. The stall fractions are the time
model's (not under test here); the driver's rule is hours = compute hours × each cause's
fraction, billed for every node. ``tests/timemodel/test_sync_stall_fractions.py`` checks the
fractions themselves on the packaged catalog.
"""

from __future__ import annotations

import math

import pytest

from conftest import SEED, TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import sync_stall
from trainbill.errors import PriceNotFoundError
from trainbill.spec import load_plan, plan_from_dict
from trainbill.usage import usage_for

OD = price("p5.48xlarge", "on_demand", "instance-hour", 10.0)
SPOT = price("p5.48xlarge", "spot", "instance-hour", 4.0)
STRAGGLERS = "stragglers (slowest GPU sets the step)"


def test_stragglers_alone_cost_cv_sqrt_2_ln_gpus_of_the_compute_hours(catalog: Catalog) -> None:
    """No layout (hours given, no model): one straggler line, 10 h × 0.01 × sqrt(2 ln 32) at $40."""
    plan = zero_hidden_plan()
    plan["reliability"] = {**plan["reliability"], "straggler_cv": 0.01}
    tiny = tiny_catalog(catalog, OD)
    u = usage_for(plan_from_dict(plan), tiny, today=TODAY)
    (line,) = sync_stall.price(u, tiny)
    # 4 nodes × 8 GPUs = 32 GPUs: fraction 0.01 × sqrt(2 ln 32) = 0.01 × 2.6328 = 0.026328
    hours = 10 * 0.01 * math.sqrt(2 * math.log(32))  # = 0.26328 cluster-hours
    assert line.item == STRAGGLERS
    assert line.quantity == pytest.approx(hours)
    assert line.unit_price_usd == pytest.approx(40.0)  # 4 nodes × $10
    assert line.cost_usd == pytest.approx(hours * 40.0)  # ≈ $10.53


def test_no_stall_no_lines(catalog: Catalog) -> None:
    """No stragglers and no layout: nothing stalls, nothing is billed."""
    tiny = tiny_catalog(catalog, OD)
    u = usage_for(plan_from_dict(zero_hidden_plan()), tiny, today=TODAY)
    assert list(sync_stall.price(u, tiny)) == []


def test_unmodelled_slow_steps_are_still_billed(catalog: Catalog) -> None:
    """A usage with stalled hours but no modelled fraction (a simulated trial's throttling)
    bills those hours, so a slower trial never comes out cheaper."""
    tiny = tiny_catalog(catalog, OD)
    u = usage_for(plan_from_dict(zero_hidden_plan()), tiny, today=TODAY)
    (line,) = sync_stall.price(u.with_values({"compute.sync_stall_hours": 3.0}), tiny)
    # 3 h × 4 nodes × $10 = $120
    assert line.item == "slow steps (throttling, stragglers)"
    assert line.quantity == 3.0
    assert line.cost_usd == pytest.approx(120.0)


def test_seed_stall_is_split_by_cause_and_sums_to_the_stalled_hours(catalog: Catalog) -> None:
    """Seed (32 nodes, half spot): each cause's line is compute hours × its fraction, billed at
    the blended 32 × (0.5 × $10 + 0.5 × $4) = $224 per cluster-hour."""
    tiny = tiny_catalog(catalog, OD, SPOT)
    u = usage_for(load_plan(SEED), tiny, today=TODAY)
    lines = {c.item: c for c in sync_stall.price(u, tiny)}
    lay = u.time.layout
    assert lay is not None
    # The seed's layout exposes tensor-parallel all-reduces and stragglers, nothing else
    # (dp sync hidden by compute, no pipeline, no experts): one line each.
    tp = "tensor-parallel activation all-reduce"
    assert set(lines) == {tp, STRAGGLERS}
    assert lines[tp].quantity == pytest.approx(u.compute.hours * lay.tp_s / lay.busy_s)
    assert lines[STRAGGLERS].quantity == pytest.approx(u.compute.hours * u.time.straggler_fraction)
    assert sum(c.quantity for c in lines.values()) == pytest.approx(u.compute.sync_stall_hours)
    for c in lines.values():
        assert c.unit_price_usd == pytest.approx(224.0)  # 32 × $7


def test_missing_instance_price_is_an_error(catalog: Catalog) -> None:
    """Stalled hours on an instance the catalog has no price for raise, naming it, not $0."""
    plan = zero_hidden_plan()
    plan["reliability"] = {**plan["reliability"], "straggler_cv": 0.01}
    u = usage_for(plan_from_dict(plan), tiny_catalog(catalog, OD), today=TODAY)
    assert u.compute.sync_stall_hours > 0
    tiny = tiny_catalog(catalog, price("p4d.24xlarge", "on_demand", "instance-hour", 10.0))
    with pytest.raises(PriceNotFoundError, match=r"p5\.48xlarge"):
        list(sync_stall.price(u, tiny))
