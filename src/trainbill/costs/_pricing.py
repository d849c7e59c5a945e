"""Price look-ups shared by the drivers: instance rates by purchase option, service rates.

Kept separate so every driver asks the catalog the same way (same date, region fallback and
citation), and so a driver never hard-codes a price.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainbill.catalog import Catalog, PricePoint
from trainbill.usage import Usage

__all__ = ["Rate", "cluster_rate", "commitment_rate", "instance_rate", "service_rate"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """A unit price with where it came from."""

    usd: float
    source: str


def _point(catalog: Catalog, usage: Usage, item: str, option: str) -> PricePoint:
    return catalog.price(item, option, provider=usage.provider, region=usage.region, as_of=usage.as_of)


def instance_rate(catalog: Catalog, usage: Usage, option: str) -> Rate:
    """Per node-hour price of the plan's instance for ``on_demand`` or ``spot``."""
    p = _point(catalog, usage, usage.instance.instance, option)
    return Rate(usd=p.usd, source=p.cite())


def commitment_rate(catalog: Catalog, usage: Usage) -> Rate:
    """Savings-Plan/commitment node-hour rate: an explicit price point, else derived.

    Derived rates apply the catalog's ``commitment.<provider>_discount_<term>`` assumption to
    the on-demand price, and say so, because public SP rates for most GPU instances are not
    in the packaged data (REFERENCE §4.1 open gap).
    """
    option = f"sp_{usage.savings_plan}"
    p = catalog.find_price(
        usage.instance.instance, option, provider=usage.provider, region=usage.region, as_of=usage.as_of
    )
    if p is not None:
        return Rate(usd=p.usd, source=p.cite())
    od = instance_rate(catalog, usage, "on_demand")
    a = catalog.assumption(f"commitment.{usage.provider}_discount_{usage.savings_plan}")
    discount = float(a.value)
    return Rate(
        usd=od.usd * (1.0 - discount),
        source=f"derived: on-demand × (1 − {discount:.2f}); {a.cite()}; on-demand: {od.source}",
    )


def cluster_rate(catalog: Catalog, usage: Usage) -> tuple[float, str]:
    """List price of one cluster-hour at the plan's spot mix, with the arithmetic in words.

    Time lost to stalls, failures and reclaims is billed for every node at whatever each node
    costs, so these lines use this blended rate (Savings Plan discounts are a separate line).
    """
    od = instance_rate(catalog, usage, "on_demand")
    s = usage.spot_fraction
    if s > 0:
        spot = instance_rate(catalog, usage, "spot")
        per_node = (1.0 - s) * od.usd + s * spot.usd
        words = (
            f"{usage.nodes} nodes × [{1 - s:.0%} × ${od.usd:,.4g} on-demand + {s:.0%} × "
            f"${spot.usd:,.4g} spot] = ${usage.nodes * per_node:,.2f}/cluster-hour"
        )
    else:
        per_node = od.usd
        words = f"{usage.nodes} nodes × ${od.usd:,.4g} on-demand = ${usage.nodes * per_node:,.2f}/cluster-hour"
    return usage.nodes * per_node, words


def service_rate(catalog: Catalog, usage: Usage, item: str) -> Rate:
    """A service price (storage, transfer, NAT, …) for the plan's provider and date.

    The packaged catalog prices services for AWS only; for other providers the AWS reference
    price stands in and the source says so (rather than silently dropping the line).
    """
    p = catalog.find_price(item, "on_demand", provider=usage.provider, region=usage.region, as_of=usage.as_of)
    if p is not None:
        return Rate(usd=p.usd, source=p.cite())
    if usage.provider == "aws":
        _point(catalog, usage, item, "on_demand")  # raises PriceNotFoundError with the details
    # No price for this provider: the AWS reference price stands in, and says so.
    ref = catalog.reference_region("aws")
    p = catalog.price(item, "on_demand", provider="aws", region=ref, as_of=usage.as_of)
    return Rate(
        usd=p.usd,
        source=f"AWS {ref} price used as a stand-in (no {usage.provider} price point in catalog): {p.cite()}",
    )
