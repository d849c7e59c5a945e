"""Networking driver on a tiny catalog: NAT gateway hours and GB processed, public IPv4 hours.

Every plan is ``conftest.zero_hidden_plan`` (4 × p5.48xlarge for exactly 10 h, every hidden
cost off) with one gateway, so each expected figure is hand arithmetic on the round prices here.
Which bytes cross the gateway is the rule under test: images and logs always; dataset reads
and checkpoint writes only when they reach object storage (or the internet) through it.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import networking
from trainbill.costs._pricing import UNPRICED
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for

PRICES = (
    price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
    price("nat.hours", "on_demand", "hour", 0.1),
    price("nat.data", "on_demand", "GB", 0.05),
    price("ipv4.hours", "on_demand", "hour", 0.01),
)
DATA_LINE = "NAT gateway data processed"
#: Checkpoints written: 10 h of training / one every 2 h = 5 (a fractional count is an expectation).
CKPTS = 10 / 2


def _priced(
    base: Catalog, *, data: dict[str, Any] | None = None, target: str = "ebs", **network: Any
) -> tuple[Usage, dict[str, Charge]]:
    """The usage and networking charges (by item) of the 4-node, 10 h plan with one NAT gateway."""
    plan = zero_hidden_plan()
    plan["network"] = {**plan["network"], "nat_gateways": 1, "s3_via_nat": False, **network}
    plan["checkpoint"] = {
        "size_gb": 100,
        "interval_hours": 2,
        "asynchronous": True,
        "target": target,
    }
    plan["data"] = {**plan["data"], **(data or {})}
    tiny = tiny_catalog(base, *PRICES)
    u = usage_for(plan_from_dict(plan), tiny, today=TODAY)
    return u, {c.item: c for c in networking.price(u, tiny)}


def test_gateway_hours_elastic_ip_and_node_traffic(catalog: Catalog) -> None:
    """One gateway over the wall-clock, its Elastic IP, and 4 nodes × wall × 0.5 GB of traffic."""
    u, lines = _priced(catalog, nat_gb_per_node_hour=0.5)
    wall = u.wall_hours  # 10 h of training + a few seconds of checkpoint stall
    assert wall == pytest.approx(10.0, abs=0.01)
    assert set(lines) == {"NAT gateway hours", DATA_LINE, "public IPv4 addresses"}
    hours = lines["NAT gateway hours"]
    # 1 gateway × wall × $0.1 (≈ $1)
    assert hours.quantity == pytest.approx(wall)
    assert hours.unit_price_usd == 0.1
    assert hours.cost_usd == pytest.approx(wall * 0.1)
    # 4 nodes × wall × 0.5 GB (≈ 20 GB) × $0.05 (≈ $1)
    data = lines[DATA_LINE]
    assert data.quantity == pytest.approx(4 * wall * 0.5)
    assert data.cost_usd == pytest.approx(4 * wall * 0.5 * 0.05)
    # (0 per node × 4 + 1 NAT Elastic IP) × wall (≈ 10 address-hours) × $0.01 (≈ $0.10)
    ip = lines["public IPv4 addresses"]
    assert ip.quantity == pytest.approx(wall)
    assert ip.cost_usd == pytest.approx(wall * 0.01)


def test_public_ips_per_node_are_billed_without_a_gateway(catalog: Catalog) -> None:
    """No gateway: no NAT lines, but 2 public IPs on each of 4 nodes are still billed."""
    u, lines = _priced(catalog, nat_gateways=0, public_ips_per_node=2)
    assert set(lines) == {"public IPv4 addresses"}
    # (2 × 4 + 0) × wall (≈ 80 address-hours) × $0.01 (≈ $0.80)
    assert lines["public IPv4 addresses"].quantity == pytest.approx(8 * u.wall_hours)
    assert lines["public IPv4 addresses"].cost_usd == pytest.approx(8 * u.wall_hours * 0.01)


def test_s3_reads_through_a_gateway_endpoint_do_not_cross_nat(catalog: Catalog) -> None:
    """Same-region S3 with an endpoint (s3_via_nat false): dataset reads add no NAT bytes."""
    u, lines = _priced(catalog, data={"dataset_gb": 1000, "source": "s3"})
    assert u.data.read_gb > 0
    assert lines[DATA_LINE].quantity == 0  # 4 × 10 × 0 GB/node-hour, nothing else


@pytest.mark.parametrize(
    ("data", "via_nat"),
    [
        ({"source": "s3"}, True),  # no gateway endpoint: S3 reads go through NAT
        ({"source": "s3", "location": "cross_region"}, False),  # an endpoint serves its region only
        ({"source": "other_cloud", "provider": "gcp"}, False),  # over the internet
        ({"source": "on_premises"}, False),
    ],
)
def test_dataset_reads_that_leave_the_vpc_cross_nat(
    catalog: Catalog, data: dict[str, Any], via_nat: bool
) -> None:
    """Reads from S3 without an endpoint, another region, another cloud or on-premises cross NAT."""
    u, lines = _priced(catalog, data={"dataset_gb": 1000, **data}, s3_via_nat=via_nat)
    # GB = 4 × 10 × 0 + every GB read (usage.dataset_read_gb: dataset × epochs), at $0.05
    assert u.data.read_gb >= 1000
    assert lines[DATA_LINE].quantity == pytest.approx(u.data.read_gb)
    assert lines[DATA_LINE].cost_usd == pytest.approx(u.data.read_gb * 0.05)


def test_checkpoints_cross_nat_only_to_s3_without_an_endpoint(catalog: Catalog) -> None:
    """EBS checkpoints stay in the VPC; S3 checkpoints via NAT add every GB written."""
    _, ebs = _priced(catalog, s3_via_nat=True, target="ebs")
    assert ebs[DATA_LINE].quantity == 0
    _, endpoint = _priced(catalog, s3_via_nat=False, target="s3")
    assert endpoint[DATA_LINE].quantity == 0
    u, lines = _priced(catalog, s3_via_nat=True, target="s3")
    # 5 checkpoints × 100 GB = 500 GB × $0.05 = $25
    assert u.checkpoint.write_gb == pytest.approx(CKPTS * 100)
    assert lines[DATA_LINE].quantity == pytest.approx(CKPTS * 100)
    assert lines[DATA_LINE].cost_usd == pytest.approx(CKPTS * 100 * 0.05)


def test_gcp_gateway_without_a_price_is_not_priced(catalog: Catalog) -> None:
    """A GCP Cloud NAT with no price point in the catalog is $0 NOT PRICED, not AWS's $0.1/h."""
    plan = zero_hidden_plan()
    plan["cluster"] = {"provider": "gcp", "instance": "a3-highgpu-8g", "nodes": 4}
    plan["network"] = {**plan["network"], "nat_gateways": 1}
    node = price(
        "a3-highgpu-8g", "on_demand", "instance-hour", 10.0, provider="gcp", region="us-central1"
    )
    tiny = tiny_catalog(catalog, node, *PRICES)
    u = usage_for(plan_from_dict(plan), tiny, today=TODAY)
    lines = {c.item: c for c in networking.price(u, tiny)}
    hours = lines["Cloud NAT gateway hours"]
    assert hours.quantity == pytest.approx(u.wall_hours)
    assert hours.unit_price_usd == 0.0
    assert hours.source.startswith(UNPRICED)
