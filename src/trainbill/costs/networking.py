"""Networking: NAT gateway hours and data processed, and public IPv4 addresses.

Pricing rule: NAT = gateways × wall hours × $/hour + GB processed × $/GB. A NAT gateway
processes only traffic between the private subnets and the internet (AWS VPC NAT gateway
pricing: per GB processed, either direction), so GB processed is:

- nodes × wall hours × GB per node-hour (images, packages, logs), always;
- the dataset reads, when the data is in object storage reached without a gateway endpoint
  (``s3_via_nat``) or in another region (a gateway endpoint serves only its own region's
  buckets), or comes from another cloud or on-premises over the internet;
- the checkpoint writes, only when checkpoints go to object storage through NAT.

Checkpoints and data on FSx or EBS stay inside the VPC and never cross NAT.
Public IPv4 = (addresses per node × nodes + one Elastic IP per NAT gateway) × wall hours × $/hour.
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
        for extra, why in _through_nat(usage):
            gb += extra
            basis += f" + {extra:,.0f} GB {why}"
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


def _through_nat(usage: Usage) -> Iterable[tuple[float, str]]:
    """The run's data and checkpoint bytes that cross the NAT gateway, with the reason."""
    reads = usage.dataset_read_gb
    if reads > 0:
        if usage.data_source == "s3" and usage.data_location == "cross_region":
            yield reads, "of dataset reads from another region's object storage (no gateway endpoint reaches it)"
        elif usage.data_source == "s3" and usage.s3_via_nat:
            yield reads, "of dataset reads from S3 routed through NAT (no gateway endpoint)"
        elif usage.data_source in ("other_cloud", "on_premises"):
            yield reads, f"of dataset reads from {usage.data_source.replace('_', ' ')} over the internet"
    if usage.checkpoint_target == "s3" and usage.s3_via_nat and usage.checkpoint_write_gb > 0:
        yield usage.checkpoint_write_gb, "of checkpoint writes to S3 routed through NAT (no gateway endpoint)"
