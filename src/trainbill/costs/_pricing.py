"""Price look-ups shared by the drivers: instance rates by purchase option, service rates.

Kept separate so every driver asks the catalog the same way (same date, region fallback and
citation), and so a driver never hard-codes a price.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from trainbill.catalog import Catalog, PricePoint
from trainbill.errors import PriceNotFoundError
from trainbill.usage import Usage

__all__ = ["Rate", "cluster_rate", "commitment_rate", "instance_rate", "service_rate"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """A unit price with where it came from."""

    usd: float
    source: str
    #: The purchase option the price is for: ``capacity_block`` where an instance has no
    #: On-Demand SKU and the "on-demand" share of the cluster is bought as Capacity Blocks.
    option: str = "on_demand"

    @property
    def words(self) -> str:
        """The option as the ledger says it ("on-demand", "Capacity Block", "spot")."""
        return {"on_demand": "on-demand", "capacity_block": "Capacity Block"}.get(self.option, self.option)


def _point(catalog: Catalog, usage: Usage, item: str, option: str) -> PricePoint:
    return catalog.price(item, option, provider=usage.provider, region=usage.region, as_of=usage.as_of)


def instance_rate(catalog: Catalog, usage: Usage, option: str) -> Rate:
    """Per node-hour price of the plan's instance for ``on_demand`` or ``spot``.

    An instance AWS sells only through EC2 Capacity Blocks (p5e.48xlarge: no On-Demand SKU in
    any region's price list) is priced at its Capacity Block rate for the non-spot share, and
    only in a region where the catalog has that rate: Capacity Blocks are sold per region, and
    another region's rate would price capacity that cannot be bought there.
    """
    item = usage.instance.instance
    if option == "on_demand" and _capacity_block_only(catalog, usage):
        history = catalog.history(item, "capacity_block", provider=usage.provider, region=usage.region)
        if not history:
            sold = sorted(r for r in catalog.regions(usage.provider)
                          if catalog.history(item, "capacity_block", provider=usage.provider, region=r))  # fmt: skip
            msg = (f"{item} has no On-Demand SKU: {usage.provider} sells it only through EC2 Capacity Blocks, "
                   f"priced in the catalog for {', '.join(sold)}, not {usage.region}; "
                   f"set cluster.region to {sold[0]!r} or choose another instance")  # fmt: skip
            raise PriceNotFoundError(msg)
        p = _point(catalog, usage, item, "capacity_block")
        source = (f"{p.cite()}; {item} has no On-Demand SKU, so its non-spot nodes are priced at the EC2 Capacity "
                  f"Block rate (reserved ahead and paid upfront in whole days: not modelled)")  # fmt: skip
        return Rate(usd=p.usd, source=source, option="capacity_block")
    p = _point(catalog, usage, item, option)
    return Rate(usd=p.usd, source=p.cite(), option=option)


def _capacity_block_only(catalog: Catalog, usage: Usage) -> bool:
    """No on-demand price for the instance in any region or date, but a Capacity Block price."""
    item, provider = usage.instance.instance, usage.provider
    if catalog.find_price(item, "on_demand", provider=provider, region=usage.region, as_of=date.max) is not None:
        return False
    return any(catalog.history(item, "capacity_block", provider=provider, region=r) for r in catalog.regions(provider))


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
    if od.option != "on_demand":
        msg = (f"no {usage.savings_plan} Savings Plan rate for {usage.instance.instance}: it has no On-Demand "
               f"price to discount (sold as {od.words}s only); set purchase.savings_plan = \"none\"")  # fmt: skip
        raise PriceNotFoundError(msg)
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
            f"{usage.nodes} nodes × [{1 - s:.0%} × ${od.usd:,.4g} {od.words} + {s:.0%} × "
            f"${spot.usd:,.4g} spot] = ${usage.nodes * per_node:,.2f}/cluster-hour"
        )
    else:
        per_node = od.usd
        words = f"{usage.nodes} nodes × ${od.usd:,.4g} {od.words} = ${usage.nodes * per_node:,.2f}/cluster-hour"
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
