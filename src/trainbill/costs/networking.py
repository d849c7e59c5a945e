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
Prices and product names come from the plan's provider (``services.<provider>.nat_*``,
``public_ipv4`` in the catalog).
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._arrays import some
from trainbill.costs._pricing import service
from trainbill.ledger import Amount, Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "networking"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """NAT gateway hours, NAT data processing and public IPv4 hours."""
    wall = usage.wall_hours
    if usage.network.nat_gateways > 0:
        hours = service(catalog, usage, "nat_hours")
        assert hours is not None
        yield Charge(
            category=CATEGORY,
            item=f"{hours.product} hours",
            quantity=usage.network.nat_gateways * wall,
            unit="hour",
            unit_price_usd=hours.usd,
            basis=lambda: f"{usage.network.nat_gateways} gateway(s) × {wall:,.1f} h",
            source=hours.source,
            provenance=hours.provenance,
            driver=__name__,
            service_category="Networking",
        )
        data = service(catalog, usage, "nat_data")
        assert data is not None
        crossing = tuple(_through_nat(usage))
        gb = usage.hosts * wall * usage.network.nat_gb_per_node_hour + sum(
            extra for extra, _ in crossing
        )

        def basis() -> str:
            base = (
                f"{usage.hosts} {usage.host_word} × {wall:,.1f} h × "
                f"{usage.network.nat_gb_per_node_hour:g} "
                "GB/node-hour"
            )
            return base + "".join(f" + {extra:,.0f} GB {why}" for extra, why in crossing)

        yield Charge(
            category=CATEGORY,
            item=f"{data.product} data processed",
            quantity=gb,
            unit="GB",
            unit_price_usd=data.usd,
            basis=basis,
            source=data.source,
            provenance=data.provenance,
            driver=__name__,
            service_category="Networking",
        )
    addresses = usage.network.public_ips_per_node * usage.hosts + usage.network.nat_gateways
    if some(addresses > 0):
        ip = service(catalog, usage, "public_ipv4")
        assert ip is not None
        yield Charge(
            category=CATEGORY,
            item=ip.product,
            quantity=addresses * wall,
            unit="address-hour",
            unit_price_usd=ip.usd,
            basis=lambda: (
                f"({usage.network.public_ips_per_node:g} per node × {usage.hosts} "
                f"{usage.host_word} + "
                f"{usage.network.nat_gateways} NAT gateway address) × {wall:,.1f} h"
            ),
            source=ip.source,
            provenance=ip.provenance,
            driver=__name__,
            service_category="Networking",
        )


def _through_nat(usage: Usage) -> Iterable[tuple[Amount, str]]:
    """The run's data and checkpoint bytes that cross the NAT gateway, with the reason."""
    reads = usage.data.read_gb
    if reads > 0:
        if usage.data.source == "s3" and usage.data.location == "cross_region":
            why = "of dataset reads from another region's object storage (no endpoint reaches it)"
            yield reads, why
        elif usage.data.source == "s3" and usage.network.s3_via_nat:
            yield (
                reads,
                "of dataset reads from object storage routed through NAT (no gateway endpoint)",
            )
        elif usage.data.source in ("other_cloud", "on_premises"):
            where = usage.data.source.replace("_", " ")
            yield reads, f"of dataset reads from {where} over the internet"
    if (
        usage.checkpoint.target == "s3"
        and usage.network.s3_via_nat
        and some(usage.checkpoint.write_gb > 0)
    ):
        yield (
            usage.checkpoint.write_gb,
            "of checkpoint writes to object storage routed through NAT (no gateway endpoint)",
        )
