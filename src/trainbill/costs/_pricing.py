"""Price look-ups shared by the drivers: instance rates by purchase option, service rates.

Kept separate so every driver asks the catalog the same way (same date, region fallback and
citation), and so a driver never hard-codes a price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from trainbill.catalog import Catalog, PricePoint
from trainbill.usage import Usage

__all__ = [
    "Rate",
    "Tier",
    "cluster_rate",
    "commitment_rate",
    "instance_rate",
    "service_rate",
    "service_rate_at",
    "volume_tiers",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """A unit price with where it came from."""

    usd: float
    source: str


def _point(catalog: Catalog, usage: Usage, item: str, option: str) -> PricePoint:
    return catalog.price(item, option, provider=usage.provider, region=usage.region, as_of=usage.as_of)


def instance_rate(catalog: Catalog, usage: Usage, option: str) -> Rate:
    """Per node-hour price of the plan's instance for ``on_demand`` or ``spot``.

    Spot prices differ by zone (p5.48xlarge: $20.99-$30.33 across us-east-1's AZs in one
    snapshot), so a plan naming its zone by AZ ID gets that zone's spot price where the catalog
    has one at least as recent as the region's; otherwise the region's, and the source says why.
    """
    p = _point(catalog, usage, usage.instance.instance, option)
    if option != "spot" or usage.zone_id is None:
        return Rate(usd=p.usd, source=p.cite())
    z = catalog.zone_price(
        usage.instance.instance, option, provider=usage.provider, zone=usage.zone_id, as_of=usage.as_of
    )
    if z is None:
        return Rate(usd=p.usd, source=f"{p.cite()} [no {usage.zone_id} spot price in catalog: region's price used]")
    if z.effective_from < p.effective_from:
        return Rate(
            usd=p.usd,
            source=f"{p.cite()} [the {usage.zone_id} spot price is older ({z.effective_from}): region's newer used]",
        )
    return Rate(usd=z.usd, source=f"{usage.zone_id} zone spot price: {z.cite()}")


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
    """A service price (storage, transfer, NAT, …) for the plan's provider, region and date."""
    return service_rate_at(catalog, item, provider=usage.provider, region=usage.region, as_of=usage.as_of)


def service_rate_at(catalog: Catalog, item: str, *, provider: str, region: str, as_of: date) -> Rate:
    """A service price where it is charged, which for data is not always the cluster's cloud or
    region (a dataset in another cloud pays that cloud's egress; another region's, its rate).

    Where the catalog has no price point for the provider, the AWS reference price stands in and
    the source says so (rather than silently dropping the line).
    """
    p = catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of)
    if p is not None:
        return Rate(usd=p.usd, source=p.cite())
    if provider == "aws":
        catalog.price(item, "on_demand", provider=provider, region=region, as_of=as_of)  # raises with details
    # No price for this provider: the AWS reference price stands in, and says so.
    ref = catalog.reference_region("aws")
    p = catalog.price(item, "on_demand", provider="aws", region=ref, as_of=as_of)
    return Rate(
        usd=p.usd,
        source=f"AWS {ref} price used as a stand-in (no {provider} price point in catalog): {p.cite()}",
    )


#: Tier items are ``<item>.above_<N>gb``: the price per GB of monthly volume above N GB.
_TIER = re.compile(r"\.above_(\d+)gb")


@dataclass(frozen=True, slots=True, kw_only=True)
class Tier:
    """One volume tier: GB per month from ``from_gb`` up to ``to_gb`` (None: no upper bound)."""

    from_gb: float
    to_gb: float | None
    rate: Rate


def volume_tiers(catalog: Catalog, item: str, *, provider: str, region: str, as_of: date) -> tuple[Tier, ...]:
    """The monthly volume tiers of a tiered price (internet egress), lowest first.

    The first tier is ``item`` itself (from 0 GB); each further tier is a price point named
    ``<item>.above_<N>gb``. Tiers the catalog lacks are not invented: the last known tier's rate
    applies to all volume above it, which overstates the bill for very large volumes. A provider
    without the item gets the AWS tiers as stand-ins (each source says so).
    """
    has_own = catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of) is not None
    tier_provider = provider if has_own else "aws"
    bounds = sorted(
        {
            int(m.group(1))
            for p in catalog.prices
            if p.provider == tier_provider and p.effective_from <= as_of
            and (m := _TIER.fullmatch(p.item.removeprefix(item))) is not None and p.item.startswith(item)
        }
    )
    names = [(0.0, item), *((float(b), f"{item}.above_{b}gb") for b in bounds)]
    rates = [(lo, service_rate_at(catalog, name, provider=provider, region=region, as_of=as_of)) for lo, name in names]
    return tuple(
        Tier(from_gb=lo, to_gb=rates[i + 1][0] if i + 1 < len(rates) else None, rate=r)
        for i, (lo, r) in enumerate(rates)
    )
