"""Price look-ups shared by the drivers: instance rates by purchase option, service rates.

Kept separate so every driver asks the catalog the same way (same date, region fallback and
citation), and so a driver never hard-codes a price.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainbill.catalog import Catalog, PricePoint
from trainbill.errors import PriceNotFoundError
from trainbill.usage import Usage

__all__ = [
    "Rate",
    "cluster_rate",
    "commitment_name",
    "commitment_rate",
    "covered_item",
    "covered_on_demand_rate",
    "instance_rate",
    "sagemaker_rate",
    "service_rate",
]


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
    return Rate(usd=p.usd, source=p.cite())


def covered_on_demand_rate(catalog: Catalog, usage: Usage) -> Rate:
    """On-demand rate of the usage the commitment covers (``ml.*`` for a SageMaker plan)."""
    p = _point(catalog, usage, covered_item(usage), "on_demand")  # raises when not published
    return Rate(usd=p.usd, source=p.cite())


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
