"""Networking: NAT gateway hours and data processed, and public IPv4 addresses.

Pricing rule: NAT = gateways × wall hours × $/hour + GB processed × $/GB, where GB processed
= nodes × wall hours × GB per node-hour (images, packages, logs) plus, when S3 is reached
through NAT instead of a gateway endpoint, every dataset read and checkpoint write. Public
IPv4 = (addresses per node × nodes + one Elastic IP per NAT gateway) × wall hours × $/hour.
Reads ``nat.hours``, ``nat.data``, ``ipv4.hours``.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import service_rate
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "networking"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """NAT gateway hours, NAT data processing and public IPv4 hours."""
    wall = usage.wall_hours
    if usage.nat_gateways > 0:
        hours = service_rate(catalog, usage, "nat.hours")
        yield LineItem(
            category=CATEGORY,
            item="NAT gateway hours",
            quantity=usage.nat_gateways * wall,
            unit="hour",
            unit_price_usd=hours.usd,
            basis=f"{usage.nat_gateways} gateway(s) × {wall:,.1f} h",
            source=hours.source,
            driver=__name__,
            service_category="Networking",
        )
        data = service_rate(catalog, usage, "nat.data")
        gb = usage.nodes * wall * usage.nat_gb_per_node_hour
        basis = f"{usage.nodes} nodes × {wall:,.1f} h × {usage.nat_gb_per_node_hour:g} GB/node-hour"
        if usage.s3_via_nat:
            s3_gb = usage.dataset_gb * usage.epochs + usage.checkpoint_count * usage.checkpoint_size_gb
            gb += s3_gb
            basis += f" + {s3_gb:,.0f} GB of S3 traffic routed through NAT (no gateway endpoint)"
        yield LineItem(
            category=CATEGORY,
            item="NAT gateway data processed",
            quantity=gb,
            unit="GB",
            unit_price_usd=data.usd,
            basis=basis,
            source=data.source,
            driver=__name__,
            service_category="Networking",
        )
    addresses = usage.public_ips_per_node * usage.nodes + usage.nat_gateways
    if addresses > 0:
        ip = service_rate(catalog, usage, "ipv4.hours")
        yield LineItem(
            category=CATEGORY,
            item="public IPv4 addresses",
            quantity=addresses * wall,
            unit="address-hour",
            unit_price_usd=ip.usd,
            basis=(
                f"({usage.public_ips_per_node:g} per node × {usage.nodes} nodes + {usage.nat_gateways} NAT "
                f"Elastic IP) × {wall:,.1f} h"
            ),
            source=ip.source,
            driver=__name__,
            service_category="Networking",
        )
