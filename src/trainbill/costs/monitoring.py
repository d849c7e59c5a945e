"""Monitoring: custom metrics and log ingestion for the cluster (CloudWatch, Cloud Monitoring,
Azure Monitor).

Pricing rule: metrics are prorated by the hour, so metric-months = nodes × metrics per node ×
wall hours / 730; logs = nodes × wall hours × GB per node-hour × ingest $/GB. The plan's
provider's products and prices come from ``services.<provider>.metrics``/``logs`` (GCP's per-MiB
metric price is converted to a metric-month in the catalog row). Ignores dashboards, alarms,
API calls and free allotments.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import service
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "monitoring"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Custom metrics and logs ingest."""
    if usage.monitoring.custom_metrics_per_node > 0:
        metric = service(catalog, usage, "metrics")
        assert metric is not None
        yield Charge(
            category=CATEGORY,
            item=metric.product,
            quantity=usage.nodes * usage.monitoring.custom_metrics_per_node * usage.months,
            unit="metric-month",
            unit_price_usd=metric.usd,
            basis=lambda: (
                f"{usage.nodes} nodes × {usage.monitoring.custom_metrics_per_node:g} metrics × "
                f"{usage.wall_hours:,.1f} h / {usage.hours_per_month:g} h (prorated hourly)"
            ),
            source=metric.source,
            provenance=metric.provenance,
            driver=__name__,
            service_category="Management and Governance",
        )
    if usage.monitoring.logs_gb_per_node_hour > 0:
        logs = service(catalog, usage, "logs")
        assert logs is not None
        yield Charge(
            category=CATEGORY,
            item=logs.product,
            quantity=usage.nodes * usage.wall_hours * usage.monitoring.logs_gb_per_node_hour,
            unit="GB",
            unit_price_usd=logs.usd,
            basis=lambda: (
                f"{usage.nodes} nodes × {usage.wall_hours:,.1f} h × "
                f"{usage.monitoring.logs_gb_per_node_hour:g} GB/node-hour"
            ),
            source=logs.source,
            provenance=logs.provenance,
            driver=__name__,
            service_category="Management and Governance",
        )
