"""Data transfer: moving the training data to the GPUs, and the requests that read it.

Pricing rule, by where the data lives (``data.source``; bytes read = dataset GB × epochs):

- ``s3`` (object storage) in the cluster's region: no transfer charge from any zone, because
  object storage is regional (AWS S3 pricing: transfer from S3 to EC2 in the same region is
  free). Only the GET requests are billed, one per ``object_mb`` read.
- ``fsx``/``ebs`` in the cluster's zone: free. In another zone of the region: inter-AZ
  transfer, which AWS bills in both directions ($0.01/GB out of the data's zone and $0.01/GB
  into the cluster's, ``transfer.inter_az`` and ``transfer.inter_az.in``; GCP bills only the
  sender). Checkpoints written to that FSx cross the same zone boundary the other way.
- any of the three in another region: inter-region transfer out of the data's region
  (``transfer.inter_region.<cluster region>`` where the pair has its own rate, else
  ``transfer.inter_region``); data in is free.
- ``other_cloud``: the other cloud's internet egress, in its monthly volume tiers
  (``transfer.internet_egress`` and ``….above_<N>gb``), on *that* cloud's bill ("data
  gravity"); the cluster's cloud charges nothing for data in.
- ``on_premises``: no cloud charge (data in is free; your network is not a cloud price).

Whether the bytes also cross a NAT gateway is the networking driver's business.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import service_rate, service_rate_at, volume_tiers
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "data_transfer"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """Transfer charges by where the data lives, and object-storage GET requests."""
    if (
        usage.data_source == "fsx"
        and usage.data_location == "cross_az"
        and usage.checkpoint_target == "fsx"
        and usage.checkpoint_write_gb > 0
    ):
        writes = f"{usage.checkpoint_count:,.1f} checkpoints × {usage.checkpoint_size_gb:,.0f} GB"
        what = f"checkpoints written to fsx {_zones(usage)}"
        yield from _inter_az(usage, catalog, usage.checkpoint_write_gb, what, writes)
    read_gb = usage.dataset_read_gb
    if read_gb <= 0:
        return
    reads = f"{usage.dataset_gb:,.0f} GB × {usage.epochs:g} epochs"
    if usage.data_source == "other_cloud":
        yield from _internet_egress(usage, catalog, read_gb, reads)
        return
    if usage.data_source == "on_premises":
        return
    if usage.data_location == "cross_region":
        yield _inter_region(usage, catalog, read_gb, reads)
    elif usage.data_location == "cross_az" and usage.data_source in ("fsx", "ebs"):
        what = f"training data read from {usage.data_source} {_zones(usage)}"
        yield from _inter_az(usage, catalog, read_gb, what, reads)
    if usage.data_source == "s3":
        gets = service_rate(catalog, usage, "s3.requests.tier2")
        requests = read_gb * 1000.0 / usage.object_mb
        yield LineItem(
            category=CATEGORY,
            item="S3 GET requests for training data",
            quantity=requests / 1000.0,
            unit="1000 requests",
            unit_price_usd=gets.usd,
            basis=f"{read_gb:,.0f} GB read in {usage.object_mb:g} MB objects = {requests:,.0f} GETs",
            source=gets.source,
            driver=__name__,
            service_category="Storage",
        )


def _zones(usage: Usage) -> str:
    """ "in use1-az2, cluster in use1-az4", or "in another zone" when the plan names none."""
    if usage.data_zone is not None and usage.zone is not None:
        return f"in {usage.data_zone}, cluster in {usage.zone}"
    return "in another zone"


def _inter_az(usage: Usage, catalog: Catalog, gb: float, what: str, how: str) -> Iterable[LineItem]:
    """One line per billed direction: out of the sending zone, into the receiving one."""
    for item, direction in (("transfer.inter_az", "out"), ("transfer.inter_az.in", "in")):
        rate = service_rate(catalog, usage, item)
        if rate.usd <= 0:
            continue  # the provider bills this direction at nothing (GCP: ingress is free)
        yield LineItem(
            category=CATEGORY,
            item=f"inter-AZ transfer {direction}: {what}",
            quantity=gb,
            unit="GB",
            unit_price_usd=rate.usd,
            basis=f"{how} = {gb:,.0f} GB, billed {direction} (inter-AZ traffic is billed per direction)",
            source=rate.source,
            driver=__name__,
            service_category="Networking",
        )


def _inter_region(usage: Usage, catalog: Catalog, gb: float, how: str) -> LineItem:
    """Out of the data's region at the pair's own rate where the catalog has one."""
    # ``location = "cross_region"`` without ``data.region``: the source region is unknown, and
    # the general rate of the cluster's region stands for it.
    known = usage.data_region != usage.region
    origin = usage.data_region if known else "another region"
    pair = f"transfer.inter_region.{usage.region}"
    own = catalog.find_price(
        pair, "on_demand", provider=usage.provider, region=usage.data_region, as_of=usage.as_of
    )
    item = (
        pair
        if known and own is not None and own.region == usage.data_region
        else "transfer.inter_region"
    )
    rate = service_rate_at(
        catalog, item, provider=usage.provider, region=usage.data_region, as_of=usage.as_of
    )
    return LineItem(
        category=CATEGORY,
        item=f"inter-region transfer of training data ({origin} → {usage.region})",
        quantity=gb,
        unit="GB",
        unit_price_usd=rate.usd,
        basis=f"{how} out of {origin} ({usage.data_source}); data in is free",
        source=rate.source,
        driver=__name__,
        service_category="Networking",
    )


def _internet_egress(usage: Usage, catalog: Catalog, gb: float, how: str) -> Iterable[LineItem]:
    """The holding cloud's internet egress, tier by tier of each month's volume.

    Tiers apply to a calendar month's egress: the run's volume is spread evenly over its
    billing months (at least one), and the account is assumed to send nothing else that month
    (other traffic would move this run into cheaper tiers). Free allowances (100 GB/month on
    AWS and Azure) are account-wide and usually spent, so they are not deducted.
    """
    months = max(usage.months, 1.0)
    per_month = gb / months
    tiers = volume_tiers(
        catalog,
        "transfer.internet_egress",
        provider=usage.data_provider,
        region=usage.data_region,
        as_of=usage.as_of,
    )
    for t in tiers:
        top = per_month if t.to_gb is None else min(per_month, t.to_gb)
        in_tier = max(0.0, top - t.from_gb)
        if in_tier <= 0:
            continue
        band = f"{t.from_gb:,.0f}+ GB" if t.to_gb is None else f"{t.from_gb:,.0f}-{t.to_gb:,.0f} GB"
        yield LineItem(
            category=CATEGORY,
            item=f"internet egress of training data from {usage.data_provider} {usage.data_region} ({band}/month tier)",
            quantity=in_tier * months,
            unit="GB",
            unit_price_usd=t.rate.usd,
            basis=(
                f"{how} = {gb:,.0f} GB over {months:,.2f} billing month(s): {in_tier:,.0f} GB/month in this tier; "
                f"billed by {usage.data_provider} (data gravity), data in to {usage.provider} is free"
            ),
            source=t.rate.source,
            driver=__name__,
            service_category="Networking",
        )
