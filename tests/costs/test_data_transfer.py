"""Data-transfer driver: reads and transfer by where the data lives, on round tiny prices
($0.50 per 1000 GETs, $0.01/GB out of a zone and $0.02/GB into one, $0.03/$0.05 per GB
between regions, $0.10 then $0.05 per GB of internet egress)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog, PricePoint
from trainbill.costs import data_transfer
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for

#: 1,000 GB read for 2 epochs = 2,000 GB; in 50 MB objects = 40,000 GETs.
_DATA = {"dataset_gb": 1000, "epochs": 2, "object_mb": 50}


def _usage(catalog: Catalog, *, checkpoint: dict[str, Any] | None = None, **data: Any) -> Usage:
    """4 × p5.48xlarge for a stated 10 h in us-east-1 reading ``_DATA`` from ``data``."""
    plan = zero_hidden_plan()
    plan["data"] = {**_DATA, **data}
    plan["storage"] |= {"fsx_capacity_gb": 24000, "fsx_tier": "persistent_1000"}
    if checkpoint is not None:
        plan["checkpoint"] = checkpoint
    return usage_for(plan_from_dict(plan), catalog, today=TODAY)


def _tiny(catalog: Catalog, *more: PricePoint) -> Catalog:
    return tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("s3.requests.tier2", "on_demand", "1000 requests", 0.5),
        price("transfer.inter_az", "on_demand", "GB", 0.01),
        price("transfer.inter_az.in", "on_demand", "GB", 0.02),
        *more,
    )


def _lines(usage: Usage, catalog: Catalog) -> list[Charge]:
    return list(data_transfer.price(usage, catalog))


@pytest.mark.parametrize("location", ["same_az", "cross_az"])
def test_s3_in_region_bills_only_the_gets(catalog: Catalog, location: str) -> None:
    """S3 is regional: no transfer from any zone; 2,000 GB × 1,000 / 50 MB = 40,000 GETs =
    40 × $0.50 = $20."""
    (gets,) = _lines(_usage(catalog, source="s3", location=location), _tiny(catalog))
    assert gets.item == "S3 GET requests for training data"
    assert gets.unit == "1000 requests"
    assert gets.quantity == pytest.approx(40.0)
    assert gets.cost_usd == pytest.approx(20.0)


@pytest.mark.parametrize("source", ["fsx", "ebs"])
def test_zonal_store_in_the_clusters_zone_is_free(catalog: Catalog, source: str) -> None:
    """FSx or EBS in the cluster's own zone: no line."""
    assert _lines(_usage(catalog, source=source, location="same_az"), _tiny(catalog)) == []


def test_zonal_store_in_another_zone_bills_both_directions(catalog: Catalog) -> None:
    """AWS bills inter-AZ out and in: 2,000 GB × $0.01 = $20 out, 2,000 GB × $0.02 = $40 in."""
    out, inbound = _lines(_usage(catalog, source="fsx", location="cross_az"), _tiny(catalog))
    assert out.item.startswith("inter-AZ transfer out: training data read from")
    assert out.quantity == pytest.approx(2000.0)
    assert out.unit_price_usd == 0.01
    assert out.cost_usd == pytest.approx(20.0)
    assert inbound.item.startswith("inter-AZ transfer in: training data read from")
    assert inbound.cost_usd == pytest.approx(40.0)


def test_checkpoints_to_fsx_in_another_zone_cross_it_too(catalog: Catalog) -> None:
    """Checkpoints to that FSx: 10 h / 2 h = 5 × 720 GB = 3,600 GB × ($0.01 + $0.02) = $36 + $72,
    before the data's $20 + $40."""
    ckpt = {"interval_hours": 2, "size_gb": 720, "target": "fsx", "write_gbytes_per_s_per_node": 1}
    usage = _usage(catalog, source="fsx", location="cross_az", checkpoint=ckpt)
    assert usage.checkpoint.count == pytest.approx(5.0)
    c_out, c_in, d_out, d_in = _lines(usage, _tiny(catalog))
    assert "checkpoints written to" in c_out.item
    assert c_out.quantity == pytest.approx(3600.0)
    assert c_out.cost_usd == pytest.approx(36.0)
    assert c_in.cost_usd == pytest.approx(72.0)
    assert "training data read from" in d_out.item
    assert d_out.cost_usd == pytest.approx(20.0)
    assert d_in.cost_usd == pytest.approx(40.0)


def test_other_region_uses_the_pairs_own_rate(catalog: Catalog) -> None:
    """S3 in us-east-2: 2,000 GB out at the us-east-2 → us-east-1 rate $0.03 = $60 (not the general
    $0.05), plus the $20 of GETs."""
    tiny = _tiny(
        catalog,
        price("transfer.inter_region", "on_demand", "GB", 0.05, region="us-east-2"),
        price("transfer.inter_region.us-east-1", "on_demand", "GB", 0.03, region="us-east-2"),
    )
    usage = _usage(catalog, source="s3", location="cross_region", region="us-east-2")
    transfer, gets = _lines(usage, tiny)
    assert transfer.item == "inter-region transfer of training data (us-east-2 → us-east-1)"
    assert transfer.unit_price_usd == 0.03
    assert transfer.cost_usd == pytest.approx(60.0)
    assert gets.cost_usd == pytest.approx(20.0)


def test_other_region_without_a_pair_rate_uses_the_general_one(catalog: Catalog) -> None:
    """No pair rate: 2,000 GB × the source region's general $0.05 = $100."""
    tiny = _tiny(
        catalog, price("transfer.inter_region", "on_demand", "GB", 0.05, region="us-east-2")
    )
    usage = _usage(catalog, source="s3", location="cross_region", region="us-east-2")
    transfer, _ = _lines(usage, tiny)
    assert transfer.unit_price_usd == 0.05
    assert transfer.cost_usd == pytest.approx(100.0)


def test_other_cloud_pays_that_clouds_egress_by_monthly_tier(catalog: Catalog) -> None:
    """GCP holds the data: a 10 h run is one billing month;
    2,000 GB = 1,000 GB × $0.10 + 1,000 GB × $0.05."""
    tiny = _tiny(
        catalog,
        price(
            "transfer.internet_egress",
            "on_demand",
            "GB",
            0.10,
            provider="gcp",
            region="us-central1",
        ),
        price(
            "transfer.internet_egress.above_1000gb",
            "on_demand",
            "GB",
            0.05,
            provider="gcp",
            region="us-central1",
        ),
    )
    usage = _usage(catalog, source="other_cloud", provider="gcp", region="us-central1")
    first, second = _lines(usage, tiny)
    assert "(0-1,000 GB/month tier)" in first.item
    assert first.quantity == pytest.approx(1000.0)
    assert first.cost_usd == pytest.approx(100.0)
    assert "(1,000+ GB/month tier)" in second.item
    assert second.quantity == pytest.approx(1000.0)
    assert second.cost_usd == pytest.approx(50.0)


def test_on_premises_data_has_no_cloud_charge(catalog: Catalog) -> None:
    """Data from your own network: data in is free, nothing to bill."""
    assert _lines(_usage(catalog, source="on_premises"), _tiny(catalog)) == []


def test_no_data_no_lines(catalog: Catalog) -> None:
    """A dataset of 0 GB reads nothing."""
    assert _lines(_usage(catalog, source="s3", dataset_gb=0), _tiny(catalog)) == []


def test_gcp_bills_inter_zone_traffic_once(catalog: Catalog) -> None:
    """GCP bills the sending zone only: Persistent Disk in another zone, 2,000 GB × $0.01 = $20,
    one line."""
    plan = zero_hidden_plan(instance="a3-highgpu-8g", provider="gcp", region="us-central1")
    plan["data"] = {**_DATA, "source": "ebs", "location": "cross_az"}
    usage = usage_for(plan_from_dict(plan), catalog, today=TODAY)
    gcp = tiny_catalog(
        catalog,
        price("transfer.inter_zone", "on_demand", "GB", 0.01, provider="gcp", region="us-central1"),
    )
    (out,) = _lines(usage, gcp)
    assert out.item.startswith(
        "inter-zone transfer out: training data read from Balanced Persistent Disk"
    )
    assert out.quantity == pytest.approx(2000.0)
    assert out.cost_usd == pytest.approx(20.0)
