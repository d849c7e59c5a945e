"""Data transfer: moving the training data to the GPUs, and the requests that read it.

Pricing rule, by where the data lives (``data.source``; bytes read = dataset GB × epochs):

- ``s3`` (object storage) in the cluster's region: no transfer charge from any zone, because
  object storage is regional (AWS S3 pricing: transfer from S3 to EC2 in the same region is
  free). Only the read requests are billed, one per ``object_mb`` read.
- ``fsx``/``ebs`` in the cluster's zone: free. In another zone of the region: inter-zone
  transfer, one line per direction the provider bills (``services.<provider>.inter_az``
  ``billed_directions``): AWS bills both ($0.01/GB out of the data's zone, ``transfer.inter_az``,
  and $0.01/GB into the cluster's, ``transfer.inter_az.in``); GCP bills the sender once; Azure
  bills nothing (a $0 line that says so). Checkpoints written to that FSx cross the same zone
  boundary the other way.
- any of the three in another region: inter-region transfer out of the data's region
  (``<inter_region item>.<cluster region>`` where the pair has its own rate, else the role's
  item); data in is free.
- ``other_cloud``: the other cloud's internet egress (``services.<that cloud>.internet_egress``),
  in its monthly volume tiers (``….above_<N>gb``), on *that* cloud's bill ("data gravity"); the
  cluster's cloud charges nothing for data in. A cloud without an egress price is NOT PRICED.
- ``on_premises``: no cloud charge (data in is free; your network is not a cloud price).

Every price is the charging provider's own (``costs._pricing``): never another provider's as a
stand-in. Whether the bytes also cross a NAT gateway is the networking driver's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

import numpy as np

from trainbill.catalog import Catalog
from trainbill.costs._arrays import some
from trainbill.costs._pricing import service, service_item, volume_tiers
from trainbill.ledger import Amount, Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "data_transfer"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Transfer charges by where the data lives, and object-storage GET requests."""
    if (
        usage.data.source == "fsx"
        and usage.data.location == "cross_az"
        and usage.checkpoint.target == "fsx"
        and some(usage.checkpoint.write_gb > 0)
    ):
        u = usage

        def writes() -> str:
            return f"{u.checkpoint.count:,.1f} checkpoints × {u.checkpoint.size_gb:,.0f} GB"

        what = f"checkpoints written to {_store(usage, catalog)} {_zones(usage)}"
        yield from _inter_az(usage, catalog, usage.checkpoint.write_gb, what, writes)
    read_gb = usage.data.read_gb
    if read_gb <= 0:
        return
    reads = f"{usage.data.dataset_gb:,.0f} GB × {usage.data.epochs:g} epochs"
    if usage.data.source == "other_cloud":
        yield from _internet_egress(usage, catalog, read_gb, reads)
        return
    if usage.data.source == "on_premises":
        return
    if usage.data.location == "cross_region":
        yield _inter_region(usage, catalog, read_gb, reads)
    elif usage.data.location == "cross_az" and usage.data.source in ("fsx", "ebs"):
        what = f"training data read from {_store(usage, catalog)} {_zones(usage)}"
        yield from _inter_az(usage, catalog, read_gb, what, lambda: reads)
    if usage.data.source == "s3":
        gets = service(catalog, usage, "object_reads")
        assert gets is not None
        requests = read_gb * 1000.0 / usage.data.object_mb
        yield Charge(
            category=CATEGORY,
            item=f"{gets.product} for training data",
            quantity=requests / 1000.0,
            unit="1000 requests",
            unit_price_usd=gets.usd,
            basis=lambda: (
                f"{read_gb:,.0f} GB read in {usage.data.object_mb:g} MB objects = {requests:,.0f} "
                "GETs"
            ),
            source=gets.source,
            provenance=gets.provenance,
            driver=__name__,
            service_category="Storage",
        )


def _store(usage: Usage, catalog: Catalog) -> str:
    """The provider's product that holds the data (``fsx`` on GCP is Managed Lustre)."""
    role = {"fsx": "shared_fs", "ebs": "block_storage", "s3": "object_storage"}[usage.data.source]
    return service_item(catalog, usage.provider, role)[1]


def _zones(usage: Usage) -> str:
    """ "in use1-az2, cluster in use1-az4", or "in another zone" when the plan names none."""
    if usage.data.zone is not None and usage.zone is not None:
        return f"in {usage.data.zone}, cluster in {usage.zone}"
    return "in another zone"


def _inter_az(
    usage: Usage, catalog: Catalog, gb: Amount, what: str, how: Callable[[], str]
) -> Iterable[Charge]:
    """One line per direction the provider bills: out of the sending zone, into the other.

    The catalog's ``inter_az`` role says how many directions are billed (AWS 2, GCP and Azure
    1); the inbound price is the role's item with ``.in`` (``transfer.inter_az.in``).
    """
    out = service(catalog, usage, "inter_az")
    assert out is not None
    rates = [("out", out)]
    if out.billed_directions >= 2:
        inbound = service(catalog, usage, "inter_az", ".in")
        assert inbound is not None
        rates.append(("in", inbound))
    per = (
        "in both directions"
        if len(rates) > 1
        else "once, as the sending zone's egress, where it charges at all"
    )
    for direction, rate in rates:

        def basis(d: str = direction) -> str:
            return (
                f"{how()} = {gb:,.0f} GB {d} of the zone ({usage.provider} bills inter-zone "
                f"traffic {per}: services.{usage.provider}.inter_az)"
            )

        yield Charge(
            category=CATEGORY,
            item=f"{rate.product} {direction}: {what}",
            quantity=gb,
            unit="GB",
            unit_price_usd=rate.usd,
            basis=basis,
            source=rate.source,
            provenance=rate.provenance,
            driver=__name__,
            service_category="Networking",
        )


def _inter_region(usage: Usage, catalog: Catalog, gb: Amount, how: str) -> Charge:
    """Out of the data's region at the pair's own rate where the catalog has one."""
    # ``location = "cross_region"`` without ``data.region``: the source region is unknown, and
    # the general rate of the cluster's region stands for it.
    known = usage.data.region != usage.region
    origin = usage.data.region if known else "another region"
    base, _ = service_item(catalog, usage.provider, "inter_region")
    own = catalog.find_price(
        f"{base}.{usage.region}",
        "on_demand",
        provider=usage.provider,
        region=usage.data.region,
        as_of=usage.as_of,
    )
    pair = known and own is not None and own.region == usage.data.region
    rate = service(
        catalog, usage, "inter_region", f".{usage.region}" if pair else "", region=usage.data.region
    )
    assert rate is not None
    return Charge(
        category=CATEGORY,
        item=f"{rate.product} of training data ({origin} → {usage.region})",
        quantity=gb,
        unit="GB",
        unit_price_usd=rate.usd,
        basis=lambda: f"{how} out of {origin} ({usage.data.source}); data in is free",
        source=rate.source,
        provenance=rate.provenance,
        driver=__name__,
        service_category="Networking",
    )


def _internet_egress(usage: Usage, catalog: Catalog, gb: Amount, how: str) -> Iterable[Charge]:
    """The holding cloud's internet egress, tier by tier of each month's volume.

    Tiers apply to a calendar month's egress: the run's volume is spread evenly over its
    billing months (at least one), and the account is assumed to send nothing else that month
    (other traffic would move this run into cheaper tiers). Free allowances (100 GB/month on
    AWS and Azure) are account-wide and usually spent, so they are not deducted.
    """
    months = np.maximum(usage.months, 1.0)  # elementwise: the run's length may be an array
    per_month = gb / months
    item, product = service_item(catalog, usage.data.provider, "internet_egress")
    tiers = volume_tiers(
        catalog,
        item,
        provider=usage.data.provider,
        region=usage.data.region,
        as_of=usage.as_of,
    )
    for t in tiers:
        top = per_month if t.to_gb is None else np.minimum(per_month, t.to_gb)
        in_tier = np.maximum(0.0, top - t.from_gb)
        if not some(in_tier > 0):
            continue
        band = f"{t.from_gb:,.0f}+ GB" if t.to_gb is None else f"{t.from_gb:,.0f}-{t.to_gb:,.0f} GB"
        yield Charge(
            category=CATEGORY,
            item=(
                f"{product} of training data from {usage.data.provider} {usage.data.region} "
                f"({band}/month tier)"
            ),
            quantity=in_tier * months,
            unit="GB",
            unit_price_usd=t.rate.usd,
            basis=partial(_egress_basis, usage, how, gb, months, in_tier),
            source=t.rate.source,
            provenance=t.rate.provenance,
            driver=__name__,
            service_category="Networking",
        )


def _egress_basis(usage: Usage, how: str, gb: Amount, months: Amount, in_tier: Amount) -> str:
    return (
        f"{how} = {gb:,.0f} GB over {months:,.2f} billing month(s): "
        f"{in_tier:,.0f} GB/month in this tier; billed by {usage.data.provider} "
        f"(data gravity), data in to {usage.provider} is free"
    )
