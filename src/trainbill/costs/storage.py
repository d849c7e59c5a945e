"""Storage: per-node block volumes, an optional Lustre file system, the dataset in object storage.

Pricing rule: GB-month = GB × run hours / 730. Block volumes that bill performance separately
(EBS gp3, Azure Premium SSD v2) bill provisioned IOPS above 3,000 and throughput above the free
baseline per volume per month; a GCP Balanced Persistent Disk bills capacity only. The file
system bills its whole capacity at the tier's GB-month price. The dataset sits in object storage
for the run. Which product plays each role on the plan's provider (EBS gp3 / Balanced
Persistent Disk / Premium SSD v2, FSx / Managed Lustre, S3 / Cloud Storage / Blob) and its
price come from the catalog (``services.<provider>.*``). Ignores snapshots and boot images.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import service
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "storage"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Block volume capacity, IOPS and throughput above baseline, file system, dataset."""
    months = usage.months
    u = usage

    def span() -> str:
        return f"{u.wall_hours:,.1f} h / {u.hours_per_month:g} h per month"

    if usage.storage.ebs_gb_per_node > 0:
        yield from _block_volumes(usage, catalog, span)
    if usage.storage.fsx_capacity_gb > 0:
        fsx = service(catalog, usage, "shared_fs", usage.storage.fsx_tier)
        assert fsx is not None  # every provider has a Lustre service
        yield Charge(
            category=CATEGORY,
            item=f"{fsx.product} ({usage.storage.fsx_tier})",
            quantity=usage.storage.fsx_capacity_gb * months,
            unit="GB-month",
            unit_price_usd=fsx.usd,
            basis=lambda: f"{usage.storage.fsx_capacity_gb:,.0f} GB × {span()}",
            source=fsx.source,
            provenance=fsx.provenance,
            driver=__name__,
            service_category="Storage",
        )
    # The dataset's durable copy is in this cloud's object storage when training reads it there
    # or from a file system or volumes loaded from it (FSx for Lustre's data repository, EBS
    # filled from S3); data held on premises or in another cloud is stored, and billed, there.
    held = usage.data.source in ("s3", "fsx", "ebs")
    if usage.data.dataset_gb > 0 and held:
        s3 = service(catalog, usage, "object_storage")
        assert s3 is not None  # every provider has object storage
        copy = (
            "" if usage.data.source == "s3" else f" (the copy {usage.data.source} is loaded from)"
        )
        yield Charge(
            category=CATEGORY,
            item=f"training dataset in {s3.product}",
            quantity=usage.data.dataset_gb * months,
            unit="GB-month",
            unit_price_usd=s3.usd,
            basis=lambda: f"{usage.data.dataset_gb:,.0f} GB dataset{copy} × {span()}",
            source=s3.source,
            provenance=s3.provenance,
            driver=__name__,
            service_category="Storage",
        )


def _block_volumes(usage: Usage, catalog: Catalog, span: Callable[[], str]) -> Iterable[Charge]:
    """Each host's block volume: its capacity, and the IOPS and throughput it is provisioned
    above the free baseline (no line at baseline)."""
    months = usage.months
    gb = service(catalog, usage, "block_storage")
    assert gb is not None  # every provider has a block volume
    yield Charge(
        category=CATEGORY,
        item=f"{gb.product} volumes",
        quantity=usage.hosts * usage.storage.ebs_gb_per_node * months,
        unit="GB-month",
        unit_price_usd=gb.usd,
        basis=lambda: (
            f"{usage.hosts} {usage.host_word} × {usage.storage.ebs_gb_per_node:,.0f} GB × {span()}"
        ),
        source=gb.source,
        provenance=gb.provenance,
        driver=__name__,
        service_category="Storage",
    )
    st = usage.storage
    yield from _above_baseline(
        usage, catalog, span, "block_iops", st.ebs_iops, "defaults.storage.ebs_iops",
        ("provisioned IOPS", "IOPS-month", "IOPS"),
    )  # fmt: skip
    yield from _above_baseline(
        usage, catalog, span, "block_throughput", st.ebs_throughput_mibps,
        "defaults.storage.ebs_throughput_mibps", ("throughput", "MiBps-month", "MiB/s"),
    )  # fmt: skip


def _above_baseline(
    usage: Usage,
    catalog: Catalog,
    span: Callable[[], str],
    role: str,
    provisioned: float,
    free_key: str,
    words: tuple[str, str, str],
) -> Iterable[Charge]:
    """One volume performance line (IOPS or throughput): what each host's volume is provisioned
    above the free baseline (``free_key``), per month. At or below baseline there is no line
    and no price is looked up: a volume at baseline needs none."""
    free = float(catalog.value(free_key))
    svc = service(catalog, usage, role) if provisioned > free else None
    if svc is None:
        return
    what, unit, shown = words
    yield Charge(
        category=CATEGORY,
        item=f"{svc.product} {what} above baseline",
        quantity=usage.hosts * (provisioned - free) * usage.months,
        unit=unit,
        unit_price_usd=svc.usd,
        basis=lambda: (
            f"{usage.hosts} {usage.host_word} × ({provisioned:,.0f} − {free:,.0f} free) "
            f"{shown} × {span()}"
        ),
        source=svc.source,
        provenance=svc.provenance,
        driver=__name__,
        service_category="Storage",
    )
