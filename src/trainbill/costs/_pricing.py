"""Price look-ups shared by the drivers: instance rates by purchase option, service rates.

Kept separate so every driver asks the catalog the same way (same date, region fallback and
citation), and so a driver never hard-codes a price.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from trainbill.catalog import Catalog, PricePoint
from trainbill.errors import PriceNotFoundError
from trainbill.usage import Usage

__all__ = [
    "UNPRICED",
    "Rate",
    "ServiceRate",
    "cluster_rate",
    "commitment_name",
    "commitment_rate",
    "covered_item",
    "covered_on_demand_rate",
    "instance_rate",
    "sagemaker_rate",
    "service",
    "service_rate",
]


#: Marks the source of a line whose provider has no price point for the product it names.
UNPRICED = "NOT PRICED"


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
    return catalog.price(
        item, option, provider=usage.provider, region=usage.region, as_of=usage.as_of
    )


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
        source = (f"{p.cite(usage.as_of)}; {item} has no On-Demand SKU, so its non-spot nodes are priced at the EC2 Capacity "
                  f"Block rate (reserved ahead and paid upfront in whole days: not modelled)")  # fmt: skip
        return Rate(usd=p.usd, source=source, option="capacity_block")
    p = _point(catalog, usage, item, option)
    return Rate(usd=p.usd, source=p.cite(usage.as_of), option=option)


def _capacity_block_only(catalog: Catalog, usage: Usage) -> bool:
    """No on-demand price for the instance in any region or date, but a Capacity Block price."""
    item, provider = usage.instance.instance, usage.provider
    if catalog.find_price(item, "on_demand", provider=provider, region=usage.region, as_of=date.max) is not None:
        return False
    return any(catalog.history(item, "capacity_block", provider=provider, region=r) for r in catalog.regions(provider))


#: Catalog option of each AWS Savings Plan kind (``trainbill.catalog.OPTIONS``).
_KIND_OPTION = {"compute": "compute_sp", "ec2-instance": "sp", "sagemaker": "sagemaker_sp"}
_KIND_NAME = {
    "compute": "Compute Savings Plan",
    "ec2-instance": "EC2 Instance Savings Plan",
    "sagemaker": "SageMaker Savings Plan",
    "": "commitment",
}


def commitment_name(usage: Usage) -> str:
    """``1yr Compute Savings Plan``, ``3yr commitment`` (GCP/Azure): for items and errors."""
    return f"{usage.savings_plan} {_KIND_NAME[usage.savings_plan_kind]}"


def covered_item(usage: Usage) -> str:
    """What the commitment is a discount on: ``ml.<instance>`` for SageMaker, else the instance."""
    inst = usage.instance.instance
    return f"ml.{inst}" if usage.savings_plan_kind == "sagemaker" else inst


def commitment_rate(catalog: Catalog, usage: Usage) -> Rate:
    """The provider's published effective hourly rate for the plan's commitment kind and term.

    Only a published rate is used: a catalog without one raises ``PriceNotFoundError`` saying
    how to add it, instead of deriving a rate from a claimed discount (the seed article's
    42 %/55 % is a claim, not a price).
    """
    option = f"{_KIND_OPTION.get(usage.savings_plan_kind, 'sp')}_{usage.savings_plan}"
    item = covered_item(usage)
    p = catalog.find_price(item, option, provider=usage.provider, region=usage.region, as_of=usage.as_of)
    if p is None:
        msg = (
            f"no published {commitment_name(usage)} rate for {item} ({usage.provider}, {usage.region}) on "
            f"{usage.as_of}: the catalog holds only providers' published commitment rates. To fix: add a "
            f"{option!r} price point with --catalog DIR (e.g. from the provider's Savings Plans / committed-use "
            "price list; 'trainbill prices update aws' fetches EC2 Instance Savings Plan rates), or drop "
            "purchase.savings_plan"
        )
        raise PriceNotFoundError(msg)
    return Rate(usd=p.usd, source=p.cite(usage.as_of))


def covered_on_demand_rate(catalog: Catalog, usage: Usage) -> Rate:
    """On-demand rate of the usage the commitment covers (``ml.*`` for a SageMaker plan)."""
    p = _point(catalog, usage, covered_item(usage), "on_demand")  # raises when not published
    return Rate(usd=p.usd, source=p.cite(usage.as_of))


def sagemaker_rate(catalog: Catalog, usage: Usage, instance: str) -> Rate | None:
    """On-demand price of ``ml.<instance>`` (what HyperPod bills), or None when not published."""
    item = f"ml.{instance}"
    p = catalog.find_price(item, "on_demand", provider=usage.provider, region=usage.region, as_of=usage.as_of)
    return None if p is None else Rate(usd=p.usd, source=p.cite())


def cluster_rate(catalog: Catalog, usage: Usage) -> tuple[float, str]:
    """List price of one cluster-hour at the plan's spot mix, with the arithmetic in words.

    Time lost to stalls, failures and reclaims is billed for every node at whatever each node
    costs, so these lines use this blended rate (Savings Plan discounts and the HyperPod ml.*
    premium are separate lines over the whole wall-clock).
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


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceRate:
    """A provider's price for a service role, with the product name the ledger shows.

    ``priced`` is False when the catalog names the provider's product but holds no price point
    for it: the line is then shown at $0 with a source that says so (and the forecast warns),
    rather than at another provider's price.
    """

    usd: float
    source: str
    product: str
    priced: bool = True
    #: How many times one GB crossing the boundary is billed (AWS inter-AZ: out and in).
    billed_directions: int = 1


def _role(catalog: Catalog, provider: str, role: str) -> Mapping[str, Any] | None:
    key = f"services.{provider}.{role}"
    if key not in catalog.assumptions:
        return None
    value = catalog.value(key)
    assert isinstance(value, Mapping)
    return value


def _service_point(catalog: Catalog, usage: Usage, item: str) -> PricePoint | None:
    """The point in force on the plan's date, else the provider's earliest (dated later).

    Service prices of GCP and Azure were first read after some plans' ``as_of``; the earliest
    point of the plan's own provider is a better answer than another provider's price, and its
    citation says it is dated after the plan's price date.
    """
    p = catalog.find_price(
        item, "on_demand", provider=usage.provider, region=usage.region, as_of=usage.as_of
    )
    if p is not None:
        return p
    later = [
        q
        for q in catalog.prices
        if q.provider == usage.provider and q.item == item and q.option == "on_demand"
    ]
    if not later:
        return None
    return catalog.find_price(
        item,
        "on_demand",
        provider=usage.provider,
        region=usage.region,
        as_of=min(q.effective_from for q in later),
    )


def service(catalog: Catalog, usage: Usage, role: str, tier: str = "") -> ServiceRate | None:
    """The plan's provider's price for a service role (``block_storage``, ``nat_hours`` …).

    ``None`` when the provider has no product in that role (Persistent Disk has no separately
    billed IOPS). Which product fills a role, and its ledger name, come from the catalog's
    ``services.<provider>.<role>`` entries; ``tier`` is appended to the item (a file system's
    throughput tier).
    """
    spec = _role(catalog, usage.provider, role)
    if spec is None:
        return None
    item = f"{spec['item']}{tier}"
    product = str(spec["product"])
    directions = int(spec.get("billed_directions", 1))
    p = _service_point(catalog, usage, item)
    if p is None:
        if usage.provider == "aws":
            _point(catalog, usage, item, "on_demand")  # raises PriceNotFoundError with the details
        return ServiceRate(
            usd=0.0,
            source=(
                f"{UNPRICED}: the catalog has no {usage.provider} price point for {product} ({item!r}); "
                "this line is $0 until you add one (--catalog DIR with a prices.csv row)"
            ),
            product=product,
            priced=False,
            billed_directions=directions,
        )
    usd, source = p.usd, p.cite(usage.as_of)
    return ServiceRate(usd=usd, source=source, product=product, billed_directions=directions)


def service_rate(catalog: Catalog, usage: Usage, item: str) -> Rate:
    """A service price by catalog item for the plan's provider and date (no other provider's).

    Kept for callers that name an item directly; drivers use ``service`` by role so each
    provider's own product is priced.
    """
    p = _service_point(catalog, usage, item)
    if p is None:
        p = _point(catalog, usage, item, "on_demand")  # raises PriceNotFoundError with the details
    return Rate(usd=p.usd, source=p.cite(usage.as_of))
