"""Storage: per-node EBS gp3 volumes, an optional FSx for Lustre file system, the dataset in S3.

Pricing rule: GB-month = GB × run hours / 730. gp3 bills provisioned IOPS above 3,000 and
throughput above 125 MiB/s per volume (the free baseline) per month. FSx bills its whole
capacity at the tier's GB-month price. The dataset sits in S3 Standard for the run. Reads
``prices.csv`` items ``ebs.gp3.*``, ``fsx.lustre.<tier>``, ``s3.standard.storage``. Ignores
snapshots and the root volume's AMI storage.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import service_rate
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "storage"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """EBS capacity, IOPS and throughput above baseline, FSx capacity, S3 dataset."""
    months = usage.months
    span = f"{usage.wall_hours:,.1f} h / {usage.hours_per_month:g} h per month"
    if usage.ebs_gb_per_node > 0:
        gb = service_rate(catalog, usage, "ebs.gp3.storage")
        yield LineItem(
            category=CATEGORY,
            item="EBS gp3 volumes",
            quantity=usage.nodes * usage.ebs_gb_per_node * months,
            unit="GB-month",
            unit_price_usd=gb.usd,
            basis=f"{usage.nodes} nodes × {usage.ebs_gb_per_node:,.0f} GB × {span}",
            source=gb.source,
            driver=__name__,
            service_category="Storage",
        )
        free_iops = float(catalog.value("defaults.storage.ebs_iops"))
        if usage.ebs_iops > free_iops:
            iops = service_rate(catalog, usage, "ebs.gp3.iops")
            yield LineItem(
                category=CATEGORY,
                item="EBS gp3 provisioned IOPS above baseline",
                quantity=usage.nodes * (usage.ebs_iops - free_iops) * months,
                unit="IOPS-month",
                unit_price_usd=iops.usd,
                basis=f"{usage.nodes} nodes × ({usage.ebs_iops:,.0f} − {free_iops:,.0f} free) IOPS × {span}",
                source=iops.source,
                driver=__name__,
                service_category="Storage",
            )
        free_tp = float(catalog.value("defaults.storage.ebs_throughput_mibps"))
        if usage.ebs_throughput_mibps > free_tp:
            tp = service_rate(catalog, usage, "ebs.gp3.throughput")
            yield LineItem(
                category=CATEGORY,
                item="EBS gp3 throughput above baseline",
                quantity=usage.nodes * (usage.ebs_throughput_mibps - free_tp) * months,
                unit="MiBps-month",
                unit_price_usd=tp.usd,
                basis=f"{usage.nodes} nodes × ({usage.ebs_throughput_mibps:,.0f} − {free_tp:,.0f} free) MiB/s × {span}",
                source=tp.source,
                driver=__name__,
                service_category="Storage",
            )
    if usage.fsx_capacity_gb > 0:
        fsx = service_rate(catalog, usage, f"fsx.lustre.{usage.fsx_tier}")
        yield LineItem(
            category=CATEGORY,
            item=f"FSx for Lustre ({usage.fsx_tier})",
            quantity=usage.fsx_capacity_gb * months,
            unit="GB-month",
            unit_price_usd=fsx.usd,
            basis=f"{usage.fsx_capacity_gb:,.0f} GB × {span}",
            source=fsx.source,
            driver=__name__,
            service_category="Storage",
        )
    if usage.dataset_gb > 0:
        s3 = service_rate(catalog, usage, "s3.standard.storage")
        yield LineItem(
            category=CATEGORY,
            item="training dataset in S3 Standard",
            quantity=usage.dataset_gb * months,
            unit="GB-month",
            unit_price_usd=s3.usd,
            basis=f"{usage.dataset_gb:,.0f} GB dataset × {span}",
            source=s3.source,
            driver=__name__,
            service_category="Storage",
        )
