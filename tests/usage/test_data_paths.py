"""Data transfer by where the data lives (data.source): each path priced by the provider's rule.

Every expected value is hand arithmetic on the catalog prices named in the comment. The base
plan (``conftest.zero_hidden_plan``) is 4 × p5.48xlarge for 10 h with every other cost off, so
the wall-clock is exactly 10 h.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import Forecast, forecast
from trainbill.spec import plan_from_dict


def _plan(data: dict[str, Any], **cluster: Any) -> dict[str, Any]:
    plan = zero_hidden_plan(**cluster)
    plan["data"] = {"dataset_gb": 1000, "epochs": 2, **data}
    return plan


def _fc(plan: dict[str, Any], catalog: Catalog) -> Forecast:
    return forecast(plan_from_dict(plan), catalog, today=TODAY)


def _transfer(fc: Forecast) -> list[Any]:
    return [ln for ln in fc.ledger.in_category("data_transfer") if not ln.item.startswith("S3 GET")]


def test_s3_in_region_has_no_transfer_charge_from_any_zone(catalog: Catalog) -> None:
    """S3 is regional: same-AZ or cross-AZ reads carry no transfer line; only GETs are billed."""
    for location in ("same_az", "cross_az"):
        fc = _fc(_plan({"source": "s3", "location": location}), catalog)
        assert _transfer(fc) == []
        gets = fc.ledger.in_category("data_transfer")[0]
        # 1,000 GB × 2 epochs / 64 MB objects = 31,250 GETs = 31.25 × $0.0004 (s3.requests.tier2).
        assert gets.item == "S3 GET requests for training data"
        assert gets.cost_usd == pytest.approx(31.25 * 0.0004)


def test_s3_cross_az_warns_that_it_is_free(catalog: Catalog) -> None:
    """A plan saying its S3 data is in another AZ is told that costs nothing, not billed for it."""
    fc = _fc(_plan({"source": "s3", "location": "cross_az"}), catalog)
    assert any("object storage is regional" in w for w in fc.warnings)


def test_fsx_in_another_zone_pays_inter_az_both_ways(catalog: Catalog) -> None:
    """FSx in use1-az2 read from a cluster in use1-az4: 2,000 GB × $0.01 out + 2,000 GB × $0.01
    in."""
    plan = _plan({"source": "fsx", "zone": "use1-az2"}, zone="use1-az4", region="us-east-1")
    plan["storage"]["fsx_capacity_gb"] = 1200
    plan["checkpoint"] = {"target": "ebs"}
    fc = _fc(plan, catalog)
    lines = _transfer(fc)
    assert [ln.item.split(":")[0] for ln in lines] == [
        "inter-AZ transfer out",
        "inter-AZ transfer in",
    ]
    for ln in lines:
        # transfer.inter_az / transfer.inter_az.in: $0.01 per GB each (AWS CUR InterZone-Out/-In).
        assert ln.quantity == pytest.approx(2000.0)
        assert ln.cost_usd == pytest.approx(2000 * 0.01)
    assert "use1-az2, cluster in use1-az4" in lines[0].item
    assert fc.usage.data.location == "cross_az"


def test_fsx_in_the_cluster_zone_is_free(catalog: Catalog) -> None:
    """The same zone for file system and cluster: no transfer line at all (no GETs either)."""
    plan = _plan({"source": "fsx", "zone": "use1-az4"}, zone="use1-az4", region="us-east-1")
    plan["storage"]["fsx_capacity_gb"] = 1200
    fc = _fc(plan, catalog)
    assert fc.ledger.in_category("data_transfer") == ()
    assert fc.usage.data.location == "same_az"


def test_checkpoints_to_fsx_in_another_zone_cross_it_too(catalog: Catalog) -> None:
    """5 checkpoints (10 h / 2 h) × 100 GB to an FSx in another AZ: 500 GB × $0.01 out and in."""
    plan = _plan({"source": "fsx", "location": "cross_az", "dataset_gb": 0})
    plan["storage"]["fsx_capacity_gb"] = 12000
    plan["checkpoint"] = {"target": "fsx", "size_gb": 100, "interval_hours": 2}
    lines = _transfer(_fc(plan, catalog))  # no dataset at all: the checkpoint writes still cross
    ck = [ln for ln in lines if "checkpoints" in ln.item]
    assert len(ck) == 2
    for ln in ck:
        assert ln.quantity == pytest.approx(5 * 100)
        assert ln.cost_usd == pytest.approx(500 * 0.01)


@pytest.mark.parametrize("location", ["cross_az", "cross_region"])
def test_ebs_in_another_zone_is_refused(catalog: Catalog, location: str) -> None:
    """An EBS volume attaches only to instances in its own Availability Zone: data on EBS in
    another zone or region cannot be read by the cluster, so there is no transfer to price."""
    with pytest.raises(SpecError, match="attaches only to instances in its own Availability Zone"):
        _fc(_plan({"source": "ebs", "location": location}), catalog)


def test_fsx_in_another_zone_pays_inter_az(catalog: Catalog) -> None:
    """FSx data served from another AZ: 2,000 GB × ($0.01 + $0.01) = $40."""
    fc = _fc(_plan({"source": "fsx", "location": "cross_az"}), catalog)
    assert sum(ln.cost_usd for ln in _transfer(fc)) == pytest.approx(2000 * (0.01 + 0.01))


def test_s3_in_another_region_pays_the_general_inter_region_rate(catalog: Catalog) -> None:
    """S3 in us-east-1 read from us-west-2: 2,000 GB × $0.02 (transfer.inter_region, us-east-1)."""
    fc = _fc(_plan({"source": "s3", "region": "us-east-1"}, region="us-west-2"), catalog)
    (line,) = _transfer(fc)
    assert line.item == "inter-region transfer of training data (us-east-1 → us-west-2)"
    assert line.cost_usd == pytest.approx(2000 * 0.02)
    assert fc.usage.data.location == "cross_region"


def test_inter_region_pair_rate_us_east_1_to_us_east_2(catalog: Catalog) -> None:
    """us-east-1 → us-east-2 has its own rate: 2,000 GB × $0.01
    (transfer.inter_region.us-east-2)."""
    fc = _fc(_plan({"source": "s3", "region": "us-east-1"}, region="us-east-2"), catalog)
    (line,) = _transfer(fc)
    assert line.unit_price_usd == pytest.approx(0.01)
    assert line.cost_usd == pytest.approx(20.0)


def test_inter_region_pair_rate_us_east_2_to_us_east_1(catalog: Catalog) -> None:
    """Was $0.02 (us-east-1's rate "to regions other than us-east-2", used as a stand-in): the
    pair costs $0.01/GB in each direction (AWS EC2 On-Demand pricing, Data Transfer between
    regions). Data in us-east-2 read by a us-east-1 cluster: 2,000 GB × $0.01 = $20."""
    fc = _fc(_plan({"source": "s3", "region": "us-east-2"}, region="us-east-1"), catalog)
    (line,) = _transfer(fc)
    assert line.item == "inter-region transfer of training data (us-east-2 → us-east-1)"
    assert line.cost_usd == pytest.approx(2000 * 0.01)


def test_cross_region_in_the_clusters_own_region_is_refused(catalog: Catalog) -> None:
    """Was billed as inter-region transfer from "another region" with no warning."""
    plan = _plan({"source": "s3", "location": "cross_region", "region": "us-east-1"})
    with pytest.raises(SpecError, match=r"data\.location: .*cluster's own region"):
        _fc(plan, catalog)


def test_cross_region_without_a_named_region_uses_the_general_rate(catalog: Catalog) -> None:
    """location = cross_region with no data.region: 2,000 GB × $0.02, origin "another region"."""
    fc = _fc(_plan({"source": "fsx", "location": "cross_region"}), catalog)
    (line,) = _transfer(fc)
    assert line.item == "inter-region transfer of training data (another region → us-east-1)"
    assert line.cost_usd == pytest.approx(40.0)


def test_data_in_gcp_pays_gcp_internet_egress(catalog: Catalog) -> None:
    """A GCS dataset read by an AWS cluster: 2,000 GB × $0.12/GiB ÷ 1.073741824 = $223.52, billed
    by GCP."""
    plan = _plan({"source": "other_cloud", "provider": "gcp"})
    plan["prices"] = {"as_of": "2026-12-01"}
    fc = _fc(plan, catalog)
    (line,) = _transfer(fc)
    per_gb = 0.12 / 1.073741824  # Google Cloud VPC network pricing, Premium Tier, first TiB
    assert line.unit_price_usd == pytest.approx(per_gb, rel=1e-6)
    assert line.cost_usd == pytest.approx(2000 * per_gb, rel=1e-6)
    assert "billed by gcp" in line.basis
    assert "gcp us-central1" in line.item  # GCP's reference region when data.region is not given
    assert fc.ledger.in_category("data_transfer") == (line,)  # no S3 GETs: the data is not in S3


def test_data_in_aws_read_from_gcp_pays_aws_egress_tiers(catalog: Catalog) -> None:
    """20,000 GB of S3 data read by a GCP cluster in one month: 10,240 × $0.09 + 9,760 × $0.085."""
    plan = _plan({"source": "other_cloud", "provider": "aws", "dataset_gb": 20000, "epochs": 1})
    plan["cluster"] = {
        "provider": "gcp",
        "instance": "a3-highgpu-8g",
        "region": "us-east4",
        "nodes": 4,
    }
    plan["prices"] = {"as_of": "2026-12-01"}
    fc = _fc(plan, catalog)
    lines = _transfer(fc)
    assert [ln.quantity for ln in lines] == pytest.approx([10240.0, 9760.0])
    assert [ln.unit_price_usd for ln in lines] == pytest.approx([0.09, 0.085])
    assert sum(ln.cost_usd for ln in lines) == pytest.approx(921.60 + 829.60)


def test_egress_tiers_are_monthly(catalog: Catalog) -> None:
    """A 1,460-h run is 2 billing months: 40,000 GB = 20,000/month, each month 10,240 @ $0.09 +
    9,760 @ $0.085."""
    plan = _plan({"source": "other_cloud", "provider": "aws", "dataset_gb": 40000, "epochs": 1})
    plan["cluster"] = {
        "provider": "gcp",
        "instance": "a3-highgpu-8g",
        "region": "us-east4",
        "nodes": 4,
    }
    plan["prices"] = {"as_of": "2026-12-01"}
    plan["run"]["hours"] = 1460  # 2 × 730 h
    lines = _transfer(_fc(plan, catalog))
    assert [ln.quantity for ln in lines] == pytest.approx([2 * 10240.0, 2 * 9760.0])
    assert sum(ln.cost_usd for ln in lines) == pytest.approx(2 * (921.60 + 829.60))


def test_data_in_azure_pays_azure_egress_tiers(catalog: Catalog) -> None:
    """20,000 GB of Blob data read by an AWS cluster in one month: Azure's own tiers, billed by
    Azure.

    Azure Retail Prices API 'Standard Data Transfer Out' (eastus, Microsoft network routing):
    $0.087/GB to 10,335 GB, then $0.083/GB: 10,335 × 0.087 + 9,665 × 0.083 = 899.145 + 802.195.
    """
    plan = _plan({"source": "other_cloud", "provider": "azure", "dataset_gb": 20000, "epochs": 1})
    plan["prices"] = {"as_of": "2026-12-01"}
    fc = _fc(plan, catalog)
    lines = _transfer(fc)
    assert [ln.quantity for ln in lines] == pytest.approx([10335.0, 9665.0])
    assert [ln.unit_price_usd for ln in lines] == pytest.approx([0.087, 0.083])
    assert sum(ln.cost_usd for ln in lines) == pytest.approx(899.145 + 802.195)
    assert all("NOT PRICED" not in ln.source for ln in lines)
    assert "billed by azure" in lines[0].basis


def test_on_premises_data_has_no_cloud_charge(catalog: Catalog) -> None:
    """Data in from your own site is free on the cloud; the forecast says what it leaves out."""
    fc = _fc(_plan({"source": "on_premises"}), catalog)
    assert fc.ledger.in_category("data_transfer") == ()
    assert any("on_premises" in w and "not in this forecast" in w for w in fc.warnings)
