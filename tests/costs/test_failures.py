"""Failures driver: cluster-hours lost to hardware failures at the blended cluster rate, on round
tiny prices ($10 on-demand, $4 spot per instance-hour)."""

from __future__ import annotations

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import failures
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for


def _usage(catalog: Catalog, rate: float, spot_fraction: float = 0.0) -> Usage:
    """4 × p5.48xlarge (32 GPUs), a stated 10 h, a 720 GB checkpoint every 2 h at 4 GB/s, 1 h
    restart.

    Exposed hours: 10 h + 5 checkpoints × 720 GB / 4 GB/s (180 s = 0.05 h) = 10.25 h.
    """
    plan = zero_hidden_plan()
    plan["checkpoint"] = {
        "interval_hours": 2,
        "size_gb": 720,
        "write_gbytes_per_s_per_node": 1,
        "target": "ebs",
    }
    # Volumes that take the 1 GB/s per node (1,000 MiB/s ≈ 1.049 GB/s; gp3 allows it from 4,000
    # IOPS, which needs 8 GiB).
    plan["storage"] |= {"ebs_gb_per_node": 8, "ebs_iops": 4000, "ebs_throughput_mibps": 1000}
    plan["reliability"] |= {"gpu_failure_rate_per_gpu_day": rate, "restart_hours": 1}
    plan["purchase"] = {"spot_fraction": spot_fraction}
    return usage_for(plan_from_dict(plan), catalog, today=TODAY)


def _tiny(catalog: Catalog) -> Catalog:
    return tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("p5.48xlarge", "spot", "instance-hour", 4.0),
    )


def _lines(usage: Usage, catalog: Catalog) -> list[Charge]:
    return list(failures.price(usage, catalog))


def test_failures_lose_half_an_interval_plus_a_restart_each(catalog: Catalog) -> None:
    """0.003/GPU-day × 32 GPUs × 10.25 h / 24 = 0.041 failures × (2 h / 2 + 1 h) = 0.082 h
    × $40 = $3.28."""
    usage = _usage(catalog, 0.003)
    assert usage.exposed_hours == pytest.approx(10.25)
    (line,) = _lines(usage, _tiny(catalog))
    assert line.item == "work lost and restarts after hardware failures"
    assert line.unit == "cluster-hour"
    assert line.quantity == pytest.approx(0.082)
    assert line.unit_price_usd == pytest.approx(40.0)  # 4 nodes × $10
    assert line.cost_usd == pytest.approx(3.28)


def test_failure_hours_are_billed_at_the_blended_spot_rate(catalog: Catalog) -> None:
    """Half spot: the same 0.082 h × 4 × (½ × $10 + ½ × $4) = $28/h = $2.296."""
    (line,) = _lines(_usage(catalog, 0.003, spot_fraction=0.5), _tiny(catalog))
    assert line.quantity == pytest.approx(0.082)
    assert line.cost_usd == pytest.approx(0.082 * 28)


def test_zero_failure_rate_gives_no_line(catalog: Catalog) -> None:
    """A plan that rules failures out has no failure line."""
    assert _lines(_usage(catalog, 0.0), _tiny(catalog)) == []
