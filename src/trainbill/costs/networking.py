"""Networking: NAT gateway hours and data processed, and public IPv4 addresses.

Pricing rule: NAT = gateways × wall hours × $/hour + GB processed × $/GB, where GB processed
= nodes × wall hours × GB per node-hour (images, packages, logs) plus, when S3 is reached
through NAT instead of a gateway endpoint, every dataset read and checkpoint write. Public
IPv4 = (addresses per node × nodes + one Elastic IP per NAT gateway) × wall hours × $/hour.
Prices and product names come from the plan's provider (``services.<provider>.nat_*``,
``public_ipv4`` in the catalog).
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import service
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "networking"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """NAT gateway hours, NAT data processing and public IPv4 hours."""
    wall = usage.wall_hours
    if usage.nat_gateways > 0:
        hours = service(catalog, usage, "nat_hours")
        assert hours is not None
        yield LineItem(
            category=CATEGORY,
            item=f"{hours.product} hours",
            quantity=usage.nat_gateways * wall,
            unit="hour",
            unit_price_usd=hours.usd,
            basis=f"{usage.nat_gateways} gateway(s) × {wall:,.1f} h",
            source=hours.source,
            driver=__name__,
            service_category="Networking",
        )
        data = service(catalog, usage, "nat_data")
        assert data is not None
        gb = usage.nodes * wall * usage.nat_gb_per_node_hour
        basis = f"{usage.nodes} nodes × {wall:,.1f} h × {usage.nat_gb_per_node_hour:g} GB/node-hour"
        if usage.s3_via_nat:
            s3_gb = (
                usage.dataset_gb * usage.epochs + usage.checkpoint_count * usage.checkpoint_size_gb
            )
            gb += s3_gb
            basis += f" + {s3_gb:,.0f} GB of S3 traffic routed through NAT (no gateway endpoint)"
        yield LineItem(
            category=CATEGORY,
            item=f"{data.product} data processed",
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
        ip = service(catalog, usage, "public_ipv4")
        assert ip is not None
        yield LineItem(
            category=CATEGORY,
            item=ip.product,
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
