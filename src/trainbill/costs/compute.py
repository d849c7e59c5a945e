"""Compute: instance-hours of pure training, split by purchase option.

Pricing rule: on-demand node-hours = nodes × (1 − spot_fraction) × compute hours at the
on-demand price; spot node-hours = nodes × spot_fraction × compute hours at the typical spot
price. An instance with no On-Demand SKU (p5e.48xlarge) has its non-spot share priced at its
EC2 Capacity Block rate (``_pricing.instance_rate``). Reads ``prices.csv`` (``on_demand``,
``spot``, ``capacity_block``). Ignores stalls, failures and reclaims
(their own drivers) and Savings Plans (``discount``).
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._arrays import some
from trainbill.costs._pricing import instance_rate
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "compute"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """On-demand and spot instance-hours of the pure training time."""
    inst = usage.instance.instance
    unit = "chip-hour" if usage.instance.billing == "chip" else "instance-hour"
    s, nodes, hours = usage.purchase.spot_fraction, usage.nodes, usage.compute.hours
    if some(s < 1):
        od = instance_rate(catalog, usage, "on_demand")
        yield Charge(
            category=CATEGORY,
            item=f"{inst} {od.words}",
            quantity=nodes * (1 - s) * hours,
            unit=unit,
            unit_price_usd=od.usd,
            basis=lambda: (
                f"{nodes} nodes × {1 - s:.0%} {od.words} × {hours:,.2f} h of pure training"
            ),
            source=od.source,
            provenance=od.provenance,
            driver=__name__,
            pricing_category="Committed" if od.option == "capacity_block" else "Standard",
        )
    if some(s > 0):
        spot = instance_rate(catalog, usage, "spot")
        yield Charge(
            category=CATEGORY,
            item=f"{inst} spot",
            quantity=nodes * s * hours,
            unit=unit,
            unit_price_usd=spot.usd,
            basis=lambda: (
                f"{nodes} nodes × {s:.0%} spot × {hours:,.2f} h at the typical spot price"
            ),
            source=spot.source,
            provenance=spot.provenance,
            driver=__name__,
            pricing_category="Dynamic",
        )
