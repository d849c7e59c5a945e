"""Monitoring: CloudWatch custom metrics and log ingestion for the cluster.

Pricing rule: metrics are prorated by the hour, so metric-months = nodes × metrics per node ×
wall hours / 730; logs = nodes × wall hours × GB per node-hour × ingest $/GB. Reads
``cloudwatch.metric`` and ``cloudwatch.logs_ingest``. Ignores dashboards, alarms and API calls.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import service_rate
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "monitoring"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """CloudWatch custom metrics and logs ingest."""
    if usage.custom_metrics_per_node > 0:
        metric = service_rate(catalog, usage, "cloudwatch.metric")
        yield LineItem(
            category=CATEGORY,
            item="CloudWatch custom metrics",
            quantity=usage.nodes * usage.custom_metrics_per_node * usage.months,
            unit="metric-month",
            unit_price_usd=metric.usd,
            basis=(
                f"{usage.nodes} nodes × {usage.custom_metrics_per_node:g} metrics × {usage.wall_hours:,.1f} h / "
                f"{usage.hours_per_month:g} h (prorated hourly)"
            ),
            source=metric.source,
            driver=__name__,
            service_category="Management and Governance",
        )
    if usage.logs_gb_per_node_hour > 0:
        logs = service_rate(catalog, usage, "cloudwatch.logs_ingest")
        yield LineItem(
            category=CATEGORY,
            item="CloudWatch Logs ingest",
            quantity=usage.nodes * usage.wall_hours * usage.logs_gb_per_node_hour,
            unit="GB",
            unit_price_usd=logs.usd,
            basis=f"{usage.nodes} nodes × {usage.wall_hours:,.1f} h × {usage.logs_gb_per_node_hour:g} GB/node-hour",
            source=logs.source,
            driver=__name__,
            service_category="Management and Governance",
        )
