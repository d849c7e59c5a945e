"""A checkpoint written to S3 through NAT moves at the NAT gateways' bandwidth, not the nodes'
(issue #38 item 6): 100 Gbps per gateway (AWS VPC User Guide, NAT gateway basics)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY
from trainbill.catalog import Catalog
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for


def _usage(catalog: Catalog, *, via_nat: bool, gateways: int = 1) -> Usage:
    plan: dict[str, Any] = {
        "run": {"hours": 10},
        "cluster": {"instance": "p5.48xlarge", "nodes": 32},
        "prices": {"as_of": "2026-01-05"},
        "checkpoint": {
            "size_gb": 900,
            "interval_hours": 2,
            "write_gbytes_per_s_per_node": 5,
            "asynchronous": False,
            "target": "s3",
        },
        "network": {"nat_gateways": gateways, "s3_via_nat": via_nat},
    }
    return usage_for(plan_from_dict(plan), catalog, today=TODAY)


def test_s3_checkpoint_through_nat_is_capped_at_the_gateway(catalog: Catalog) -> None:
    # 32 nodes × 5 GB/s = 160 GB/s asked; one gateway carries 100 Gbps / 8 = 12.5 GB/s
    capped = _usage(catalog, via_nat=True)
    assert capped.checkpoint.stall_hours_each == pytest.approx(900 / 12.5 / 3600)
    # two gateways: 25 GB/s
    two = _usage(catalog, via_nat=True, gateways=2)
    assert two.checkpoint.stall_hours_each == pytest.approx(900 / 25.0 / 3600)


def test_s3_checkpoint_through_a_gateway_endpoint_is_not(catalog: Catalog) -> None:
    free = _usage(catalog, via_nat=False)
    assert free.checkpoint.stall_hours_each == pytest.approx(900 / (32 * 5.0) / 3600)
