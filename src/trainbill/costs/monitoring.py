"""Monitoring: custom metrics and log ingestion for the cluster (CloudWatch, Cloud Monitoring,
Azure Monitor).

Pricing rule: metrics are prorated by the hour, so metric-months = hosts × metrics per host ×
wall hours / 730, in the provider's monthly volume tiers of metrics (CloudWatch: $0.30 for the
first 10,000, then $0.10, $0.05, $0.02; ``costs._pricing.volume_tiers``), the account assumed to
publish no others; logs = hosts × wall hours × GB per host-hour × ingest $/GB. The plan's
provider's products and prices come from ``services.<provider>.metrics``/``logs`` (GCP's per-MiB
metric price is converted to a metric-month in the catalog row). Ignores dashboards, alarms,
API calls and free allotments.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

import numpy as np

from trainbill.catalog import Catalog
from trainbill.costs._arrays import some
from trainbill.costs._pricing import (
    Rate,
    ServiceRate,
    Tier,
    service,
    service_item,
    volume_tiers,
)
from trainbill.ledger import Amount, Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "monitoring"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Custom metrics and logs ingest."""
    if usage.monitoring.custom_metrics_per_node > 0:
        yield from _metrics(usage, catalog)
    if usage.monitoring.logs_gb_per_node_hour > 0:
        logs = service(catalog, usage, "logs")
        assert logs is not None
        yield Charge(
            category=CATEGORY,
            item=logs.product,
            quantity=usage.hosts * usage.wall_hours * usage.monitoring.logs_gb_per_node_hour,
            unit="GB",
            unit_price_usd=logs.usd,
            basis=lambda: (
                f"{usage.hosts} {usage.host_word} × {usage.wall_hours:,.1f} h × "
                f"{usage.monitoring.logs_gb_per_node_hour:g} GB/node-hour"
            ),
            source=logs.source,
            provenance=logs.provenance,
            driver=__name__,
            service_category="Management and Governance",
        )


def _metrics(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Custom metrics, one line per volume tier they reach (the product's plain name when all
    are in its first tier): at the first tier's price for all of them, 122,880 metrics of a
    2,048-node run cost $0.30 each where AWS charges $0.10 above 10,000."""
    metric = service(catalog, usage, "metrics")
    assert metric is not None
    item, _ = service_item(catalog, usage.provider, "metrics")
    tiers = volume_tiers(
        catalog, item, provider=usage.provider, region=usage.region, as_of=usage.as_of
    )
    count = usage.hosts * usage.monitoring.custom_metrics_per_node
    used: list[tuple[Tier, Amount]] = []
    for t in tiers:
        top = count if t.to_gb is None else np.minimum(count, t.to_gb)
        in_tier = np.maximum(0.0, top - t.from_gb)
        if some(in_tier > 0):
            used.append((t, in_tier))
    if len(used) <= 1:  # one price for all of them (the provider's only, or its first tier)
        r = used[0][0].rate if used else metric
        yield _metric_line(usage, metric.product, r, count, band="")
        return
    for t, in_tier in used:
        to = "+" if t.to_gb is None else f"-{t.to_gb:,.0f}"
        band = f" ({t.from_gb:,.0f}{to} metrics tier)"
        yield _metric_line(usage, metric.product, t.rate, in_tier, band=band)


def _metric_line(
    usage: Usage, product: str, r: Rate | ServiceRate, count: Amount, *, band: str
) -> Charge:
    return Charge(
        category=CATEGORY,
        item=f"{product}{band}",
        quantity=count * usage.months,
        unit="metric-month",
        unit_price_usd=r.usd,
        basis=partial(_metric_basis, usage, count, tiered=bool(band)),
        source=r.source,
        provenance=r.provenance,
        driver=__name__,
        service_category="Management and Governance",
    )


def _metric_basis(usage: Usage, in_tier: Amount, *, tiered: bool) -> str:
    per = usage.monitoring.custom_metrics_per_node
    tier = (
        f" = {usage.hosts * per:,.0f} metrics, {in_tier:,.0f} of them in this tier"
        if tiered
        else ""
    )
    return (
        f"{usage.hosts} {usage.host_word} × {per:g} metrics{tier} × {usage.wall_hours:,.1f} h / "
        f"{usage.hours_per_month:g} h (prorated hourly)"
    )
