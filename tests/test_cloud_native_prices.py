"""GCP and Azure plans are priced with their own providers' products, never AWS services or
prices."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import SEED, TODAY, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.forecasting import forecast
from trainbill.spec import load_plan, plan_from_dict

#: Words that name an AWS service or price source; none may appear on a GCP or Azure line.
AWS_WORDS = ("AWS", "EBS", "FSx", "CloudWatch", "S3", "EC2", "CUR 2.0", "FOCUS")


def _seed_on(cloud: str, instance: str, region: str, **purchase: Any) -> Any:
    plan = load_plan(SEED).model_dump()
    plan["cluster"].update(provider=cloud, instance=instance, region=region)
    plan["purchase"].update(purchase)
    return plan_from_dict(plan)


def _line(fc: Any, category: str, item: str) -> Any:
    matches = [ln for ln in fc.ledger.in_category(category) if ln.item == item]
    assert len(matches) == 1, [ln.item for ln in fc.ledger.lines]
    return matches[0]


@pytest.mark.parametrize(
    ("cloud", "instance", "region", "purchase"),
    [
        ("gcp", "a3-highgpu-8g", "us-central1", {}),
        # ND H100 v5 spot is priced only from 2026-09-19, after the seed's price date: on-demand.
        ("azure", "Standard_ND96isr_H100_v5", "eastus", {"spot_fraction": 0.0}),
    ],
)
def test_non_aws_plan_names_no_aws_service_or_price(
    catalog: Catalog, cloud: str, instance: str, region: str, purchase: dict[str, Any]
) -> None:
    """The seed example moved to GCP or Azure: no line's item or source is an AWS service or AWS
    price."""
    fc = forecast(_seed_on(cloud, instance, region, **purchase), catalog, today=TODAY)
    for ln in fc.ledger.lines:
        for word in AWS_WORDS:
            assert word not in ln.item, (ln.item, word)
            assert word not in ln.source, (ln.item, ln.source, word)


def test_gcp_lines_hand_computed(catalog: Catalog) -> None:
    """Balanced PD, Cloud NAT and Cloud Logging at the catalog's GCP prices (10 h run, 4 nodes)."""
    plan = zero_hidden_plan(provider="gcp", instance="a3-highgpu-8g", region="us-central1")
    plan["storage"] = {"ebs_gb_per_node": 1000, "ebs_iops": 10000, "fsx_capacity_gb": 0}
    plan["network"] = {"nat_gateways": 1, "nat_gb_per_node_hour": 1.0, "public_ips_per_node": 0}
    plan["monitoring"] = {"custom_metrics_per_node": 0, "logs_gb_per_node_hour": 0.05}
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert fc.usage.wall_hours == pytest.approx(10.0)
    # pd-balanced $0.10/GiB-month (Cloud Billing Catalog 2025-05-01): 4 × 1000 GB × 10 h / 730 h ×
    # $0.10.
    disk = _line(fc, "storage", "Balanced Persistent Disk volumes")
    assert disk.cost_usd == pytest.approx(4 * 1000 * 10 / 730 * 0.10)
    # A Persistent Disk bills capacity only: no IOPS line even at 10,000 IOPS.
    assert not [ln for ln in fc.ledger.lines if "IOPS" in ln.item]
    # Cloud NAT gateway at its 32-VM cap $0.0448/h; $0.045 per GiB processed: 4 × 10 h × 1 GB,
    # a GB being 1 / 1.073741824 GiB (was priced $0.045 per GB, 7.4% high).
    assert _line(fc, "networking", "Cloud NAT gateway hours").cost_usd == pytest.approx(
        1 * 10 * 0.0448
    )
    assert _line(fc, "networking", "Cloud NAT gateway data processed").cost_usd == pytest.approx(
        4 * 10 * 1.0 * 0.045 / 1.073741824
    )
    # The NAT's external address: 1 × 10 h × $0.005.
    assert _line(fc, "networking", "external IPv4 addresses").cost_usd == pytest.approx(10 * 0.005)
    # Cloud Logging $0.50/GiB ingested: 4 nodes × 10 h × 0.05 GB (÷ 1.073741824 GB per GiB).
    assert _line(fc, "monitoring", "Cloud Logging ingest").cost_usd == pytest.approx(
        4 * 10 * 0.05 * 0.50 / 1.073741824, rel=1e-6
    )


def test_gcp_inter_zone_billed_once_and_azure_inter_zone_free(catalog: Catalog) -> None:
    """Disk data in another zone: GCP bills it once at its own price; Azure shows one $0 line."""
    plan = zero_hidden_plan(provider="azure", instance="Standard_ND96isr_H100_v5", region="eastus")
    plan["data"] = {"dataset_gb": 100, "location": "cross_az", "epochs": 2, "source": "ebs"}
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    (line,) = fc.ledger.in_category("data_transfer")
    assert line.item.startswith("inter-availability-zone transfer out: ")
    assert (line.quantity, line.cost_usd) == (
        pytest.approx(200.0),
        0.0,
    )  # 100 GB × 2 epochs, once, at $0
    plan = zero_hidden_plan(provider="gcp", instance="a3-highgpu-8g", region="us-central1")
    plan["data"] = {"dataset_gb": 100, "location": "cross_az", "epochs": 2, "source": "ebs"}
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    (line,) = fc.ledger.in_category("data_transfer")  # once: no "in" line
    assert line.item.startswith("inter-zone transfer out: ")
    # $0.01 per GiB (Google Cloud VPC network pricing, read 2026-09-20) = 0.01 / 1.073741824 per GB,
    # × 200 GB = $1.8626; GCP's earliest price point, dated after the plan's 2025-05-01.
    assert line.cost_usd == pytest.approx(200 * 0.01 / 1.073741824, rel=1e-5)
    assert "AFTER the plan's price date" in line.source


def test_gcp_inter_region_priced_at_gcps_own_rate(catalog: Catalog) -> None:
    """Disk data in another GCP region: GCP's inter-region SKU, $0.02/GiB, never an AWS rate."""
    plan = zero_hidden_plan(provider="gcp", instance="a3-highgpu-8g", region="us-central1")
    plan["data"] = {"dataset_gb": 100, "location": "cross_region", "epochs": 2, "source": "ebs"}
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    (line,) = fc.ledger.in_category("data_transfer")
    assert line.item.startswith("inter-region transfer of training data")
    # 100 GB × 2 epochs = 200 GB × $0.02/GiB ÷ 1.073741824 GB/GiB = 200 × $0.0186265 = $3.7253
    assert line.quantity == pytest.approx(200.0)
    assert line.cost_usd == pytest.approx(200 * 0.0186265, rel=1e-9)
    assert "AFTER the plan's price date" in line.source  # priced 2026-06-05, plan 2025-05-01
    for word in AWS_WORDS:
        assert word not in line.source


def test_role_without_a_price_is_not_priced_and_warned(catalog: Catalog) -> None:
    """Azure Managed Lustre has no price in the catalog (prices-2026-12 §3: not found): a NOT
    PRICED $0 line and a warning, never FSx's rate. (Premium SSD v2, the former example, is now
    priced from the Retail Prices API meters.)"""
    plan = zero_hidden_plan(provider="azure", instance="Standard_ND96isr_H100_v5", region="eastus")
    plan["storage"] = {"ebs_gb_per_node": 0, "fsx_capacity_gb": 48000, "fsx_tier": "persistent_250"}
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    fs = _line(fc, "storage", "Azure Managed Lustre (persistent_250)")
    assert (fs.quantity > 0, fs.cost_usd) == (True, 0.0)
    assert fs.source.startswith("NOT PRICED")
    assert any("NOT PRICED" in w and "Azure Managed Lustre" in w for w in fc.warnings)


def test_price_age_is_shown_on_the_plan_date(catalog: Catalog) -> None:
    """A price used on the plan's date says how old it is: 2025-05-01 − 2018-07-01 = 2,496 days."""
    plan = zero_hidden_plan(provider="gcp", instance="a3-highgpu-8g", region="us-central1")
    plan["monitoring"] = {"custom_metrics_per_node": 0, "logs_gb_per_node_hour": 0.05}
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    logs = _line(fc, "monitoring", "Cloud Logging ingest")
    assert "price dated 2018-07-01, 2496 days old on 2025-05-01" in logs.source


def test_gcp_managed_lustre_hand_computed(catalog: Catalog) -> None:
    """36,000 GiB of Managed Lustre 250 MBps/TiB (the tier's minimum, a size Google creates) for
    10 h: $0.21/GiB-month (us-central1 SKU export)."""
    plan = zero_hidden_plan(provider="gcp", instance="a3-highgpu-8g", region="us-central1")
    plan["storage"] = {"ebs_gb_per_node": 0, "fsx_capacity_gb": 36000, "fsx_tier": "persistent_250"}
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    line = _line(fc, "storage", "Google Cloud Managed Lustre (persistent_250)")
    # The catalog's $0.1955777 per GB-month is $0.21 / 1.073741824; the file system holds
    # 36,000 GiB = 38,654.7 GB: 38,654.7 GB × 10 h / 730 h × $0.1955777 = $103.56, which is
    # 36,000 GiB × 10 / 730 × $0.21 (to the rounding of the catalog's rate).
    assert line.cost_usd == pytest.approx(36000 * 1.073741824 * 10 / 730 * 0.1955777, rel=1e-9)
    assert line.cost_usd == pytest.approx(36000 * 10 / 730 * 0.21, rel=1e-6)
