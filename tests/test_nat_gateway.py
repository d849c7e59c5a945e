"""NAT gateway data processed: only traffic that crosses the gateway (AWS VPC NAT gateway pricing).

nat.data is $0.045/GB (AWS CUR 2.0 export 2026-04, NatGateway-Bytes). The base plan
(``conftest.zero_hidden_plan``) runs 4 nodes for exactly 10 h with every other cost off.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import SEED, TODAY, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.forecasting import Forecast, forecast
from trainbill.spec import load_plan, plan_from_dict

NAT_PER_GB = 0.045


def _nat_gb(fc: Forecast) -> float:
    """GB on the NAT data line; 0 when the ledger drops the line for having nothing on it."""
    lines = [
        ln for ln in fc.ledger.in_category("networking") if ln.item == "NAT gateway data processed"
    ]
    assert len(lines) <= 1
    return float(lines[0].quantity) if lines else 0.0


def _plan(checkpoint: dict[str, Any], data: dict[str, Any], *, via_nat: bool) -> dict[str, Any]:
    plan = zero_hidden_plan()
    plan["network"] = {
        "nat_gateways": 1,
        "nat_gb_per_node_hour": 0,
        "s3_via_nat": via_nat,
        "public_ips_per_node": 0,
    }
    plan["checkpoint"] = {"size_gb": 100, "interval_hours": 2, "asynchronous": True, **checkpoint}
    plan["data"] = {"dataset_gb": 0, **data}
    return plan


def _fc(plan: dict[str, Any], catalog: Catalog) -> Forecast:
    return forecast(plan_from_dict(plan), catalog, today=TODAY)


def test_seed_example_nat_counts_s3_reads_not_fsx_checkpoints(catalog: Catalog) -> None:
    """Seed: 32 nodes × wall × 0.5 GB + 2,000 GB × 3 epochs of S3 reads; its FSx checkpoints add
    nothing."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    wall = fc.usage.wall_hours  # 80.34 h from the time model (not under test here)
    expected = 32 * wall * 0.5 + 2000 * 3  # = 1,285.4 + 6,000 = 7,285.4 GB
    assert _nat_gb(fc) == pytest.approx(expected)
    cost = expected * NAT_PER_GB
    assert cost == pytest.approx(328, abs=1)  # the "about $330", not $1,915
    line = next(ln for ln in fc.ledger.lines if ln.item == "NAT gateway data processed")
    assert line.cost_usd == pytest.approx(cost)


def test_seed_example_nat_data_ignores_fsx_checkpoint_size(catalog: Catalog) -> None:
    """Doubling the seed's FSx checkpoints (980 → 1,960 GB) adds no checkpoint bytes to NAT.

    Only the per-node-hour traffic moves, because the longer checkpoint stalls lengthen the
    wall-clock: ΔNAT GB = 32 nodes × Δwall × 0.5 GB/node-hour, and the S3 part stays 6,000 GB.
    """
    plan = load_plan(SEED)
    bigger = plan.model_copy(
        update={"checkpoint": plan.checkpoint.model_copy(update={"size_gb": 1960.0})}
    )
    small, big = forecast(plan, catalog, today=TODAY), forecast(bigger, catalog, today=TODAY)
    assert big.usage.checkpoint.size_gb == 2 * small.usage.checkpoint.size_gb
    for fc in (small, big):
        assert _nat_gb(fc) - 32 * fc.usage.wall_hours * 0.5 == pytest.approx(6000.0)
    delta_wall = big.usage.wall_hours - small.usage.wall_hours
    assert _nat_gb(big) - _nat_gb(small) == pytest.approx(32 * delta_wall * 0.5)


def test_s3_checkpoints_through_nat_are_nat_data(catalog: Catalog) -> None:
    """5 checkpoints (10 h / 2 h) × 100 GB to S3 without a gateway endpoint: 500 GB × $0.045 =
    $22.50."""
    fc = _fc(_plan({"target": "s3"}, {}, via_nat=True), catalog)
    assert _nat_gb(fc) == pytest.approx(500.0)
    assert _nat_gb(fc) * NAT_PER_GB == pytest.approx(22.50)


def test_s3_checkpoints_through_a_gateway_endpoint_skip_nat(catalog: Catalog) -> None:
    """With the free S3 gateway endpoint (s3_via_nat = false) nothing crosses NAT: 0 GB."""
    fc = _fc(_plan({"target": "s3"}, {"dataset_gb": 1000}, via_nat=False), catalog)
    assert _nat_gb(fc) == 0.0


@pytest.mark.parametrize("target", ["fsx", "ebs"])
def test_fsx_and_ebs_checkpoints_never_cross_nat(catalog: Catalog, target: str) -> None:
    """Checkpoints to FSx or EBS stay in the VPC even when S3 goes through NAT: 0 GB."""
    plan = _plan({"target": target}, {}, via_nat=True)
    plan["storage"]["fsx_capacity_gb"] = 12000
    assert _nat_gb(_fc(plan, catalog)) == 0.0


def test_fsx_dataset_never_crosses_nat(catalog: Catalog) -> None:
    """A dataset on FSx is read inside the VPC: 0 GB of NAT data even with s3_via_nat."""
    plan = _plan({"target": "ebs"}, {"dataset_gb": 1000, "source": "fsx"}, via_nat=True)
    plan["storage"]["fsx_capacity_gb"] = 1200
    assert _nat_gb(_fc(plan, catalog)) == 0.0


def test_dataset_from_another_region_crosses_nat(catalog: Catalog) -> None:
    """A gateway endpoint serves only its own region's buckets: 1,000 GB × 2 epochs through NAT."""
    plan = _plan(
        {"target": "ebs"}, {"dataset_gb": 1000, "epochs": 2, "region": "us-east-1"}, via_nat=False
    )
    plan["cluster"]["region"] = "us-west-2"
    assert _nat_gb(_fc(plan, catalog)) == pytest.approx(2000.0)


@pytest.mark.parametrize("source", ["other_cloud", "on_premises"])
def test_internet_dataset_crosses_nat(catalog: Catalog, source: str) -> None:
    """Data from another cloud or on-premises comes over the internet: 1,000 GB through NAT."""
    data: dict[str, Any] = {"dataset_gb": 1000, "source": source}
    if source == "other_cloud":
        data["provider"] = "gcp"
    plan = _plan({"target": "ebs"}, data, via_nat=False)
    plan["prices"] = {"as_of": "2026-12-01"}
    assert _nat_gb(_fc(plan, catalog)) == pytest.approx(1000.0)
