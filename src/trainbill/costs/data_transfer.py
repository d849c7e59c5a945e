"""Data transfer: moving the training data to the GPUs, and the S3 requests that read it.

Pricing rule: bytes read = dataset GB × epochs. Same AZ (or S3 in the same region): no
transfer charge — S3 is regional, so the seed article's "cross-AZ S3 reads" cost nothing
extra. Cross-AZ (data on EC2/FSx in another AZ): $/GB out plus $/GB in (AWS bills both
directions; GCP bills the egress once; Azure charges nothing between zones). Cross-region:
inter-region $/GB out of the source region. GET requests: one per ``object_mb`` read. Prices,
product names and billed directions come from ``services.<provider>.*`` in the catalog.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import service
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "data_transfer"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """Transfer charges by data location, and S3 GET requests."""
    read_gb = usage.dataset_gb * usage.epochs
    if read_gb <= 0:
        return
    if usage.data_location == "cross_az":
        rate = service(catalog, usage, "inter_az")
        assert rate is not None
        both = rate.billed_directions == 2
        yield LineItem(
            category=CATEGORY,
            item=f"{rate.product} of training data{' (out + in)' if both else ''}",
            quantity=rate.billed_directions * read_gb,
            unit="GB",
            unit_price_usd=rate.usd,
            basis=(
                f"{usage.dataset_gb:,.0f} GB × {usage.epochs:g} epochs, billed "
                f"{'once out and once in' if both else 'once'}"
            ),
            source=rate.source,
            driver=__name__,
            service_category="Networking",
        )
    elif usage.data_location == "cross_region":
        rate = service(catalog, usage, "inter_region")
        assert rate is not None
        yield LineItem(
            category=CATEGORY,
            item=f"{rate.product} of training data",
            quantity=read_gb,
            unit="GB",
            unit_price_usd=rate.usd,
            basis=f"{usage.dataset_gb:,.0f} GB × {usage.epochs:g} epochs out of the source region",
            source=rate.source,
            driver=__name__,
            service_category="Networking",
        )
    gets = service(catalog, usage, "object_reads")
    assert gets is not None
    requests = read_gb * 1000.0 / usage.object_mb
    yield LineItem(
        category=CATEGORY,
        item=f"{gets.product} for training data",
        quantity=requests / 1000.0,
        unit="1000 requests",
        unit_price_usd=gets.usd,
        basis=f"{read_gb:,.0f} GB read in {usage.object_mb:g} MB objects = {requests:,.0f} GETs",
        source=gets.source,
        driver=__name__,
        service_category="Storage",
    )
