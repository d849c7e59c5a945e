"""Spot reclaim driver on a tiny catalog: reclaims × (interval / 2 + restart) at the cluster rate.

Plans are ``conftest.zero_hidden_plan`` (4 × p5.48xlarge, 10 h of training, every hidden cost
off) with a share of the nodes on spot and a stated hazard, interval and restart. EC2 is $10
on-demand and $4 spot per node-hour, so a half-spot cluster-hour is 4 × (0.5 × 10 + 0.5 × 4) =
$28. The hours exposed to reclaims (training plus a few seconds of checkpoint stall) are read
from the usage: this driver prices them, ``usage`` computes them.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import spot_reclaim
from trainbill.errors import PriceNotFoundError
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for

OD = price("p5.48xlarge", "on_demand", "instance-hour", 10.0)
SPOT = price("p5.48xlarge", "spot", "instance-hour", 4.0)
HAZARD = 0.01  # reclaims per spot node-hour
INTERVAL = 2.0  # h between checkpoints: half of it is lost on average
RESTART = 0.5  # h to restart the job after a reclaim


def _priced(base: Catalog, spot: float, *prices: object) -> tuple[Usage, list[Charge]]:
    """Usage and spot-reclaim charges of the 4-node plan with ``spot`` of its nodes on spot."""
    plan = zero_hidden_plan()
    plan["purchase"] = {"spot_fraction": spot}
    plan["reliability"] = {
        **plan["reliability"],
        "spot_reclaim_rate_per_node_hour": HAZARD,
        "restart_hours": RESTART,
    }
    plan["checkpoint"] = {"size_gb": 10, "interval_hours": INTERVAL, "target": "ebs"}
    tiny = tiny_catalog(base, *(prices or (OD, SPOT)))
    u = usage_for(plan_from_dict(plan), tiny, today=TODAY)
    return u, list(spot_reclaim.price(u, tiny))


def test_reclaims_lose_half_an_interval_plus_restart_for_the_whole_cluster(
    catalog: Catalog,
) -> None:
    """Half-spot: 0.01 × 2 spot nodes × exposed h reclaims, each costing 1.5 cluster-hours at
    $28."""
    u, (line,) = _priced(catalog, 0.5)
    exposed = u.exposed_hours
    assert exposed == pytest.approx(10.0, abs=0.1)  # 10 h training + checkpoint stall
    # reclaims = 0.01/node-hour × (4 × 0.5) spot nodes × exposed ≈ 0.2
    reclaims = HAZARD * 2 * exposed
    # each loses 2 h / 2 + 0.5 h = 1.5 h of the whole cluster ≈ 0.3 cluster-hours
    lost = reclaims * (INTERVAL / 2 + RESTART)
    assert u.reliability.reclaim_events == pytest.approx(reclaims)
    assert line.unit == "cluster-hour"
    assert line.quantity == pytest.approx(lost)
    # cluster-hour = 4 × (0.5 × $10 + 0.5 × $4) = $28; ≈ 0.3 × $28 = $8.4
    assert line.unit_price_usd == pytest.approx(28.0)
    assert line.cost_usd == pytest.approx(lost * 28.0)
    assert line.pricing_category == "Dynamic"


def test_no_spot_nodes_no_reclaim_line(catalog: Catalog) -> None:
    """An all on-demand cluster has nothing to reclaim (and needs no spot price)."""
    _, lines = _priced(catalog, 0.0, OD)
    assert lines == []


def test_missing_spot_price_is_an_error(catalog: Catalog) -> None:
    """Spot nodes without a spot price in the catalog raise, naming the instance, not $0."""
    with pytest.raises(PriceNotFoundError, match=r"p5\.48xlarge"):
        _priced(catalog, 0.5, OD)


def test_spot_share_array_prices_elementwise_with_zero_where_no_spot(catalog: Catalog) -> None:
    """A grid of spot shares (0, 0.5, 1) prices each point as its own plan would; 0 costs $0."""
    u, _ = _priced(catalog, 0.5)
    tiny = tiny_catalog(catalog, OD, SPOT)
    grid = u.with_schedule(spot_fraction=np.array([0.0, 0.5, 1.0]))  # type: ignore[arg-type]
    (line,) = spot_reclaim.price(grid, tiny)
    exposed = u.exposed_hours
    # spot nodes 0, 2, 4; cluster-hour 4 × $10 = $40, $28, 4 × $4 = $16; 1.5 h lost per reclaim
    expected = [0.0, HAZARD * 2 * exposed * 1.5 * 28.0, HAZARD * 4 * exposed * 1.5 * 16.0]
    assert np.asarray(line.cost_usd) == pytest.approx(expected)
