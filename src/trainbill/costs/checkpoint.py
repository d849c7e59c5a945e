"""Checkpoints: the training time stalled while writing them, and the storage they occupy.

Pricing rule:
* stall = checkpoints × size / aggregate write bandwidth (nodes × per-node rate, capped by the
  FSx tier's throughput when writing to FSx; snapshot rate only when asynchronous), billed at
  the blended cluster rate;
* on S3: ``keep_last`` checkpoints × size × (run months + retention months) × S3 Standard
  GB-month, plus one PUT per ``object_mb`` part of every checkpoint written.
Checkpoints on FSx or EBS occupy capacity priced by the ``storage`` driver. Ignores reads on
restart (same-region S3 GETs of a few objects).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from trainbill.catalog import Catalog
from trainbill.costs._pricing import (
    cluster_rate,
    cluster_rate_provenance,
    cluster_rate_source,
    service,
    service_item,
)
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "checkpoint"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Write stall, S3 storage of retained checkpoints and PUT requests."""
    if usage.checkpoint.size_gb <= 0:
        return
    rate, words = cluster_rate(catalog, usage)
    u = usage
    # The target in the provider's words (the plan's "s3" is Cloud Storage on GCP, Blob
    # Storage on Azure; "fsx" its managed Lustre, "ebs" its block storage).
    role = {"s3": "object_storage", "fsx": "shared_fs", "ebs": "block_storage"}
    target = usage.checkpoint.target
    if target in role:
        target = service_item(catalog, usage.provider, role[target])[1]
    mode = "async snapshot" if usage.checkpoint.asynchronous else f"synchronous write to {target}"
    yield Charge(
        category=CATEGORY,
        item="training stalled while checkpointing",
        quantity=usage.checkpoint.stall_hours,
        unit="cluster-hour",
        unit_price_usd=rate,
        basis=lambda: (
            f"{u.checkpoint.count:,.1f} checkpoints (every {u.checkpoint.interval_hours:g} h) × "
            f"{u.checkpoint.stall_hours_each * 60:,.2f} min ({u.checkpoint.size_gb:,.0f} GB "
            f"at {_write_gbytes_per_s(u):,.3g} GB/s, {mode}); {words()}"
        ),
        source=cluster_rate_source(catalog, usage),
        provenance=cluster_rate_provenance(catalog, usage),
        driver=__name__,
    )
    if usage.checkpoint.target != "s3":
        return
    yield from _object_storage(usage, catalog)


def _write_gbytes_per_s(u: Usage) -> float:
    """The cluster's write rate the stall implies (the per-node rate, or what the target takes:
    an FSx file system's or each node's EBS volume's throughput; ``usage``); infinite where a
    write takes no measurable time (a rate given as unbounded), never a division by zero."""
    seconds = u.checkpoint.stall_hours_each * 3600.0
    return float(u.checkpoint.size_gb / seconds) if seconds > 0 else math.inf


def _object_storage(u: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Retained checkpoints in object storage and the multipart PUTs that wrote them."""
    store = service(catalog, u, "object_storage")
    assert store is not None
    retention_months = u.checkpoint.retention_days * 24.0 / u.hours_per_month
    kept = np.minimum(float(u.checkpoint.keep_last), np.maximum(u.checkpoint.count, 1.0))
    yield Charge(
        category=CATEGORY,
        item=f"checkpoint storage ({store.product})",
        quantity=kept * u.checkpoint.size_gb * (u.months + retention_months),
        unit="GB-month",
        unit_price_usd=store.usd,
        basis=lambda: (
            f"{kept:g} retained × {u.checkpoint.size_gb:,.0f} GB × ({u.wall_hours:,.1f} h run + "
            f"{u.checkpoint.retention_days:g} days retention) / {u.hours_per_month:g} h per month"
        ),
        source=store.source,
        provenance=store.provenance,
        driver=__name__,
        service_category="Storage",
    )
    puts = service(catalog, u, "object_writes")
    assert puts is not None
    # Each node uploads its shard as one multipart object: its parts, plus the create and
    # complete calls, each a PUT-class request (S3 pricing: "PUT, COPY, POST, LIST requests").
    parts = np.ceil(u.checkpoint.size_gb * 1000.0 / u.hosts / u.data.object_mb)
    requests = u.hosts * (parts + 2.0)
    yield Charge(
        category=CATEGORY,
        item=f"checkpoint writes: {puts.product} (multipart parts)",
        quantity=u.checkpoint.count * requests / 1000.0,
        unit="1000 requests",
        unit_price_usd=puts.usd,
        basis=lambda: (
            f"{u.checkpoint.count:,.1f} checkpoints × {u.hosts} {u.host_word[:-1]} shards × "
            f"({parts:,.0f} "
            f"parts of {u.data.object_mb:g} MB + create and complete)"
        ),
        source=puts.source,
        provenance=puts.provenance,
        driver=__name__,
        service_category="Storage",
    )
