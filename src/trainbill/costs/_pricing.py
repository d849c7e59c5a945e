"""Price look-ups shared by the drivers: instance rates by purchase option, service rates.

Kept separate so every driver asks the catalog the same way (same date, region fallback and
citation), and so a driver never hard-codes a price.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Catalog, PricePoint, Provenance
from trainbill.costs._answers import _remembered
from trainbill.costs._arrays import some
from trainbill.errors import PriceNotFoundError
from trainbill.usage import Usage, sagemaker_price

__all__ = [
    "UNPRICED",
    "Rate",
    "ServiceRate",
    "Tier",
    "cluster_rate",
    "cluster_rate_provenance",
    "cluster_rate_source",
    "commitment_name",
    "commitment_rate",
    "commitment_rate_for",
    "covered_item",
    "covered_on_demand_rate",
    "group_rate",
    "instance_rate",
    "sagemaker_rate",
    "service",
    "service_item",
    "service_rate",
    "service_rate_at",
    "volume_tiers",
]


#: Marks the source of a line whose provider has no price point for the product it names.
UNPRICED = "NOT PRICED"


@record
class Rate:
    """A unit price with where it came from."""

    usd: float
    source: str
    #: Where the price comes from; a charge priced at this rate carries it.
    provenance: Provenance
    #: The purchase option the price is for: ``capacity_block`` where an instance has no
    #: On-Demand SKU and the "on-demand" share of the cluster is bought as Capacity Blocks.
    option: str = "on_demand"
    #: The date of the published price the rate rests on, where a caller must compare it with
    #: the plan's (a commitment rate: ``commitment_rate_for``); None where no one asks.
    effective_from: date | None = None

    @property
    def words(self) -> str:
        """The option as the ledger says it ("on-demand", "Capacity Block", "spot")."""
        return {"on_demand": "on-demand", "capacity_block": "Capacity Block"}.get(
            self.option, self.option
        )


def _point(catalog: Catalog, usage: Usage, item: str, option: str) -> PricePoint:
    return catalog.price(
        item, option, provider=usage.provider, region=usage.region, as_of=usage.as_of
    )


def instance_rate(catalog: Catalog, usage: Usage, option: str) -> Rate:
    """Per node-hour price of the plan's instance for ``on_demand`` or ``spot``; the spot price
    times ``usage.purchase.spot_price_scale`` (1 for a forecast; a simulated trial's spot price)."""
    rate = _listed_instance_rate(catalog, usage, option)
    scale = usage.purchase.spot_price_scale
    if option != "spot" or (np.ndim(scale) == 0 and scale == 1.0):  # a forecast: as listed
        return rate
    return replace(rate, usd=rate.usd * usage.purchase.spot_price_scale)


def group_rate(catalog: Catalog, usage: Usage, option: str, instance: str) -> Rate:
    """Per node-hour price of another instance of the plan (an extra group's head node), looked
    up exactly as the workers' is (zone spot price, Capacity Block, price age). A simulated
    trial's spot price scale is not applied: it is sampled from the workers' Spot history."""
    return _listed_instance_rate(catalog, usage, option, instance)


def _listed_instance_rate(
    catalog: Catalog, usage: Usage, option: str, instance: str | None = None
) -> Rate:
    """The catalog's per node-hour price of the plan's instance (or ``instance``) for
    ``on_demand`` or ``spot`` (``_look_up_instance_rate``), remembered (``_remembered``)."""
    item = instance or usage.instance.instance
    key = ("instance", item, option, usage.provider, usage.region, usage.as_of, usage.zone_id)
    return _remembered(catalog, key, lambda: _look_up_instance_rate(catalog, usage, option, item))


def _look_up_instance_rate(catalog: Catalog, usage: Usage, option: str, item: str) -> Rate:
    """The catalog's per node-hour price of ``item`` for ``on_demand`` or ``spot``: it reads
    only the usage's provider, region, price date and zone.

    An instance AWS sells only through EC2 Capacity Blocks (p5e.48xlarge: no On-Demand SKU in
    any region's price list) is priced at its Capacity Block rate for the non-spot share, and
    only in a region where the catalog has that rate: Capacity Blocks are sold per region, and
    another region's rate would price capacity that cannot be bought there.

    Spot prices differ by zone (p5.48xlarge: $20.99-$30.33 across us-east-1's AZs in one
    snapshot), so a plan naming its zone by AZ ID gets that zone's spot price where the catalog
    has one at least as recent as the region's; otherwise the region's, and the source says why.
    """
    if option == "on_demand" and _capacity_block_only(catalog, usage, item):
        return _capacity_block_rate(catalog, usage, item)
    p = _point(catalog, usage, item, option)
    if option != "spot" or usage.zone_id is None:
        return Rate(usd=p.usd, source=p.cite(usage.as_of), provenance=p.provenance, option=option)
    z = catalog.zone_price(
        item,
        option,
        provider=usage.provider,
        zone=usage.zone_id,
        as_of=usage.as_of,
    )
    if z is None:
        return Rate(
            usd=p.usd,
            source=(
                f"{p.cite(usage.as_of)} [no {usage.zone_id} spot price in catalog: "
                "region's price used]"
            ),
            provenance=p.provenance,
            option=option,
        )
    if z.effective_from < p.effective_from:
        return Rate(
            usd=p.usd,
            source=(
                f"{p.cite(usage.as_of)} [the {usage.zone_id} spot price is older "
                f"({z.effective_from}): region's newer used]"
            ),
            provenance=p.provenance,
            option=option,
        )
    return Rate(
        usd=z.usd,
        source=f"{usage.zone_id} zone spot price: {z.cite(usage.as_of)}",
        provenance=z.provenance,
        option=option,
    )


def _capacity_block_rate(catalog: Catalog, usage: Usage, item: str) -> Rate:
    """The EC2 Capacity Block rate of ``item`` in the plan's region, else a clear refusal."""
    history = catalog.history(item, "capacity_block", provider=usage.provider, region=usage.region)
    if not history:
        sold = sorted(
            r
            for r in catalog.regions(usage.provider)
            if catalog.history(item, "capacity_block", provider=usage.provider, region=r)
        )
        msg = (
            f"{item} has no On-Demand SKU: {usage.provider} sells it only through EC2 Capacity "
            f"Blocks, priced in the catalog for {', '.join(sold)}, not {usage.region}; set "
            f"cluster.region to {sold[0]!r} or choose another instance"
        )
        raise PriceNotFoundError(msg)
    p = _point(catalog, usage, item, "capacity_block")
    source = (
        f"{p.cite(usage.as_of)}; {item} has no On-Demand SKU, so its non-spot nodes are priced at "
        "the EC2 Capacity Block rate (reserved ahead and paid upfront in whole days: not modelled)"
    )
    return Rate(usd=p.usd, source=source, provenance=p.provenance, option="capacity_block")


def _capacity_block_only(catalog: Catalog, usage: Usage, item: str) -> bool:
    """No on-demand price for ``item`` in any region or date, but a Capacity Block price."""
    provider = usage.provider
    if (
        catalog.find_price(
            item, "on_demand", provider=provider, region=usage.region, as_of=date.max
        )
        is not None
    ):
        return False
    return any(
        catalog.history(item, "capacity_block", provider=provider, region=r)
        for r in catalog.regions(provider)
    )


#: The catalog options that price each commitment kind, in order: the kind's own published
#: rate, then its proxy where the provider's rate for the kind is not published. AWS quotes the
#: same ceilings for an EC2 Instance Savings Plan and a Standard RI ("up to 72%"), and for a
#: Compute Savings Plan and a Convertible RI ("up to 66%", Savings Plans FAQ), and the published
#: pairs agree (p5 3-yr No Upfront EC2 Instance SP $23.77728 = Standard RI $23.77728; p4de 1-yr
#: $17.40137 = $17.401365): so a Standard RI rate stands in for a missing EC2 Instance SP rate
#: and a Convertible RI rate for a missing Compute SP rate, labelled "proxy" wherever shown.
#: GCP and Azure keep their committed-use / reservation rate in ``sp_*``.
_KIND_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "compute": (("compute_sp", ""), ("convertible_ri", "Convertible RI")),
    "ec2-instance": (("sp", ""), ("standard_ri", "Standard RI")),
    "sagemaker": (("sagemaker_sp", ""),),
    "": (("sp", ""),),
}
_KIND_NAME = {
    "compute": "Compute Savings Plan",
    "ec2-instance": "EC2 Instance Savings Plan",
    "sagemaker": "SageMaker Savings Plan",
    "": "commitment",
}


def commitment_name(usage: Usage) -> str:
    """``1yr Compute Savings Plan``, ``3yr commitment`` (GCP/Azure): for items and errors."""
    return f"{usage.purchase.savings_plan} {_KIND_NAME[usage.purchase.savings_plan_kind]}"


def covered_item(usage: Usage) -> str:
    """What the commitment is a discount on: ``ml.<instance>`` for SageMaker, else the instance."""
    inst = usage.instance.instance
    return f"ml.{inst}" if usage.purchase.savings_plan_kind == "sagemaker" else inst


def commitment_rate_for(
    catalog: Catalog, *, item: str, provider: str, region: str, as_of: date, kind: str, term: str
) -> Rate | None:
    """The one rule for the hourly rate of a ``kind`` commitment of ``term`` on ``item``, or
    None when the catalog holds no rate to build it from (forecast, planner, advisor all ask it).

    In order: the kind's own published rate in force on ``as_of``; its proxy's (a Standard RI
    for an EC2 Instance Savings Plan, a Convertible RI for a Compute Savings Plan:
    ``_KIND_OPTIONS``). Where neither is in force yet (a plan dated before the earliest
    published rate: the p5 rates were read after the June-2025 price cut), the earliest later
    rate is carried back by the provider's own ratio: on-demand on ``as_of`` × (commitment rate
    ÷ on-demand on the commitment rate's date). A discount claimed in an article (42 %/55 %) is
    never used. A proxy or carried-back rate is an estimate, so its provenance is UNVERIFIED
    and the forecast says so.
    """
    name = _KIND_NAME[kind]
    options = _KIND_OPTIONS[kind]
    for option, proxy in options:
        p = catalog.find_price(
            item, f"{option}_{term}", provider=provider, region=region, as_of=as_of
        )
        if p is not None:
            return _commitment_point(p, f"{term} {proxy}" if proxy else "", f"{term} {name}", as_of)
    for option, proxy in options:
        later = _earliest(catalog, item, f"{option}_{term}", provider, region)
        if later is None:
            continue
        od_now = catalog.find_price(
            item, "on_demand", provider=provider, region=region, as_of=as_of
        )
        od_then = catalog.find_price(
            item, "on_demand", provider=provider, region=region, as_of=later.effective_from
        )
        if od_now is None or od_then is None:
            return None
        usd = od_now.usd * later.usd / od_then.usd
        what = f"{term} {proxy} rate (proxy for the {term} {name})" if proxy else f"{term} {name}"
        source = (
            f"derived for a plan dated before the earliest published rate: on-demand "
            f"${od_now.usd:,.6g} on {as_of} × ({what} ${later.usd:,.6g} ÷ on-demand "
            f"${od_then.usd:,.6g}, both on {later.effective_from}) = ${usd:,.4f}; "
            f"{what}: {later.cite()}; on-demand on {as_of}: {od_now.cite(as_of)}; on-demand on "
            f"{later.effective_from}: {od_then.cite()}"
        )
        return Rate(
            usd=usd,
            source=source,
            provenance=Provenance.weakest(
                later.provenance, od_now.provenance, od_then.provenance, Provenance.UNVERIFIED
            ),
            option=later.option,
            effective_from=later.effective_from,
        )
    return None


def _commitment_point(p: PricePoint, proxy: str, name: str, as_of: date) -> Rate:
    """A published commitment rate in force: its own, or a proxy's labelled as such."""
    if not proxy:
        return Rate(
            usd=p.usd,
            source=p.cite(as_of),
            provenance=p.provenance,
            option=p.option,
            effective_from=p.effective_from,
        )
    return Rate(
        usd=p.usd,
        source=(
            f"proxy: no published {name} rate, the {proxy} rate ${p.usd:,.6g} stands in (AWS "
            f"quotes the same discount ceiling for both); {p.cite(as_of)}"
        ),
        provenance=Provenance.weakest(p.provenance, Provenance.UNVERIFIED),
        option=p.option,
        effective_from=p.effective_from,
    )


def _earliest(
    catalog: Catalog, item: str, option: str, provider: str, region: str
) -> PricePoint | None:
    """The earliest price point of ``option`` (the plan's region, else the reference region)."""
    for r in (region, catalog.reference_region(provider)):
        history = catalog.history(item, option, provider=provider, region=r)
        if history:
            return min(history, key=lambda q: q.effective_from)
    return None


def commitment_rate(catalog: Catalog, usage: Usage) -> Rate:
    """The hourly rate of the plan's commitment kind and term (``commitment_rate_for``).

    A catalog with no rate to build it from raises ``PriceNotFoundError`` saying how to add it,
    instead of deriving a rate from a claimed discount (the seed article's 42 %/55 % is a
    claim, not a price).
    """
    kind = usage.purchase.savings_plan_kind
    item = covered_item(usage)
    rate = commitment_rate_for(
        catalog,
        item=item,
        provider=usage.provider,
        region=usage.region,
        as_of=usage.as_of,
        kind=kind,
        term=usage.purchase.savings_plan,
    )
    if rate is None:
        option = f"{_KIND_OPTIONS[kind][0][0]}_{usage.purchase.savings_plan}"
        msg = (
            f"no published {commitment_name(usage)} rate for {item} ({usage.provider}, "
            f"{usage.region}) on {usage.as_of}: the catalog holds only providers' published "
            f"commitment rates ({_held_commitments(catalog, usage.provider, item)}). To fix: add "
            f"a {option!r} price point with --catalog DIR (e.g. from the provider's Savings Plans "
            "/ committed-use price list; 'trainbill prices update aws' fetches EC2 Instance "
            "Savings Plan rates), or drop purchase.savings_plan"
        )
        raise PriceNotFoundError(msg)
    return rate


def _held_commitments(catalog: Catalog, provider: str, item: str) -> str:
    """Which commitment rates the catalog does hold for ``item``, so an error can say that a
    rate exists only for another kind, term or (later) date instead of leaving the user to guess."""
    held = sorted(
        {
            f"{q.option} in {q.region} from {q.effective_from}"
            for q in catalog.prices
            if q.provider == provider and q.item == item and q.option not in _NOT_COMMITMENT
        }
    )
    return f"for {item}: {', '.join(held)}" if held else f"none for {item}"


#: Purchase options that are not commitments (``trainbill.catalog.OPTIONS``).
_NOT_COMMITMENT = frozenset({"on_demand", "spot", "capacity_block"})


def covered_on_demand_rate(catalog: Catalog, usage: Usage) -> Rate:
    """On-demand rate of the usage the commitment covers (``ml.*`` for a SageMaker plan)."""
    p = _point(catalog, usage, covered_item(usage), "on_demand")  # raises when not published
    return Rate(usd=p.usd, source=p.cite(usage.as_of), provenance=p.provenance)


def sagemaker_rate(catalog: Catalog, usage: Usage, instance: str) -> Rate | None:
    """On-demand price of ``ml.<instance>`` (what HyperPod bills), published or derived by the
    EC2 price ratio (``usage.sagemaker_price``), or None when neither is possible."""
    p = sagemaker_price(
        catalog, instance, provider=usage.provider, region=usage.region, as_of=usage.as_of
    )
    return None if p is None else Rate(usd=p.usd, source=p.cite(), provenance=p.provenance)


def cluster_rate_source(catalog: Catalog, usage: Usage) -> str:
    """Where ``cluster_rate``'s prices come from: the price of each purchase option it blends.

    A line billed at the blended rate cites the on-demand price when some node is on demand,
    the spot price when some node is on spot, and both when the plan mixes them.
    """
    s = usage.purchase.spot_fraction
    cited: list[tuple[str, str]] = []
    if some(s < 1):
        cited.append(("on-demand", instance_rate(catalog, usage, "on_demand").source))
    if some(s > 0):
        cited.append(("spot", instance_rate(catalog, usage, "spot").source))
    if len(cited) == 1:
        return cited[0][1]
    return "; ".join(f"{option}: {source}" for option, source in cited)


def cluster_rate_provenance(catalog: Catalog, usage: Usage) -> Provenance:
    """Where ``cluster_rate``'s prices come from: the weakest of the options it blends."""
    s = usage.purchase.spot_fraction
    options = [o for o, used in (("on_demand", some(s < 1)), ("spot", some(s > 0))) if used]
    return Provenance.weakest(*(instance_rate(catalog, usage, o).provenance for o in options))


def cluster_rate(catalog: Catalog, usage: Usage) -> tuple[float, Callable[[], str]]:
    """List price of one cluster-hour at the plan's spot mix, and the arithmetic in words.

    Time lost to stalls, failures and reclaims is billed for every node at whatever each node
    costs, so these lines use this blended rate (Savings Plan discounts and the HyperPod ml.*
    premium are separate lines over the whole wall-clock). The words are rendered on demand
    (a ledger line's basis), from a single plan only: like the usage's fields, the rate is an
    array when the usage's spot share or spot price is (``costs.price_arrays``).
    """
    s = usage.purchase.spot_fraction
    nodes = usage.nodes
    if not some(s < 1):  # every node on spot: no on-demand price is needed, nor may one exist
        spot_only = instance_rate(catalog, usage, "spot")
        return (
            nodes * spot_only.usd,
            lambda: (
                f"{nodes} nodes × ${spot_only.usd:,.4g} spot = "
                f"${nodes * spot_only.usd:,.2f}/cluster-hour"
            ),
        )
    od = instance_rate(catalog, usage, "on_demand")
    if not some(s > 0):
        return (
            nodes * od.usd,
            lambda: (
                f"{nodes} nodes × ${od.usd:,.4g} {od.words} = ${nodes * od.usd:,.2f}/cluster-hour"
            ),
        )
    spot = instance_rate(catalog, usage, "spot")
    per_node = (1.0 - s) * od.usd + s * spot.usd

    def words() -> str:
        return (
            f"{nodes} nodes × [{1 - s:.0%} × ${od.usd:,.4g} {od.words} + {s:.0%} × "
            f"${spot.usd:,.4g} spot] = ${nodes * per_node:,.2f}/cluster-hour"
        )

    return nodes * per_node, words


@record
class ServiceRate:
    """A provider's price for a service role, with the product name the ledger shows.

    Provenance ``UNPRICED`` when the catalog names the provider's product but holds no price
    point for it: the line is then shown at $0 with a source that says so (and the forecast
    warns), rather than at another provider's price.
    """

    usd: float
    source: str
    product: str
    provenance: Provenance
    #: How many times one GB crossing the boundary is billed (AWS inter-AZ: out and in).
    billed_directions: int = 1

    @property
    def priced(self) -> bool:
        """The catalog holds a price for the product (the line is not a NOT PRICED $0)."""
        return self.provenance is not Provenance.UNPRICED


def _role(catalog: Catalog, provider: str, role: str) -> Mapping[str, Any] | None:
    return catalog.table(f"services.{provider}.{role}")


def _service_point(
    catalog: Catalog, item: str, *, provider: str, region: str, as_of: date
) -> PricePoint | None:
    """The point in force on ``as_of``, else the provider's earliest (dated later).

    Service prices of GCP and Azure were first read after some plans' ``as_of``; the earliest
    point of the priced provider is a better answer than another provider's price, and its
    citation says it is dated after the plan's price date.
    """
    p = catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of)
    if p is not None:
        return p
    # The earliest later point *of the region the look-up settles on* (the plan's region, else the
    # reference region, else any): the earliest date over all regions can predate every point of
    # the plan's region, which would wrongly find nothing.
    later = sorted(
        {
            q.effective_from
            for q in catalog.prices
            if q.provider == provider
            and q.item == item
            and q.option == "on_demand"
            and q.effective_from > as_of
        }
    )
    for on in later:
        p = catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=on)
        if p is not None:
            return p
    return None


def _priced(
    catalog: Catalog, item: str, *, provider: str, region: str, as_of: date, product: str
) -> ServiceRate:
    """``_look_up_priced``, remembered (``_remembered``)."""
    return _remembered(
        catalog,
        ("service", item, provider, region, as_of, product),
        lambda: _look_up_priced(
            catalog, item, provider=provider, region=region, as_of=as_of, product=product
        ),
    )


def _look_up_priced(
    catalog: Catalog, item: str, *, provider: str, region: str, as_of: date, product: str
) -> ServiceRate:
    """``item``'s price for ``provider``, or a NOT PRICED $0 rate: never another provider's.

    AWS is the catalog's fully priced provider, so an AWS item without a price is a catalog
    error and raises PriceNotFoundError with the details.
    """
    p = _service_point(catalog, item, provider=provider, region=region, as_of=as_of)
    if p is None:
        if provider == "aws":
            catalog.price(item, "on_demand", provider=provider, region=region, as_of=as_of)
        return ServiceRate(
            usd=0.0,
            source=(
                f"{UNPRICED}: the catalog has no {provider} price point for {product} ({item!r}); "
                "this line is $0 until you add one (--catalog DIR with a prices.csv row)"
            ),
            product=product,
            provenance=Provenance.UNPRICED,
        )
    return ServiceRate(usd=p.usd, source=p.cite(as_of), product=product, provenance=p.provenance)


def service(
    catalog: Catalog, usage: Usage, role: str, tier: str = "", *, region: str | None = None
) -> ServiceRate | None:
    """The plan's provider's price for a service role (``block_storage``, ``nat_hours`` …).

    ``None`` when the provider has no product in that role (Persistent Disk has no separately
    billed IOPS). Which product fills a role, and its ledger name, come from the catalog's
    ``services.<provider>.<role>`` entries; ``tier`` is appended to the item (a file system's
    throughput tier, ``.in`` for the inbound direction of inter-AZ transfer). ``region`` prices
    the role where it is charged when that is not the cluster's region (data read out of
    another region pays that region's rate).
    """
    spec = _role(catalog, usage.provider, role)
    if spec is None:
        return None
    rate = _priced(
        catalog,
        f"{spec['item']}{tier}",
        provider=usage.provider,
        region=usage.region if region is None else region,
        as_of=usage.as_of,
        product=str(spec["product"]),
    )
    directions = int(spec.get("billed_directions", 1))
    return ServiceRate(
        usd=rate.usd,
        source=rate.source,
        product=rate.product,
        provenance=rate.provenance,
        billed_directions=directions,
    )


def service_item(catalog: Catalog, provider: str, role: str) -> tuple[str, str]:
    """The catalog item and product name that fill ``role`` for ``provider``.

    For drivers that price a role's item elsewhere than the plan's provider and region (another
    cloud's internet egress) or derive a related item from it (an inter-region pair rate).
    A role the catalog lacks is a CatalogSchemaError naming the missing entry.
    """
    spec = catalog.value(f"services.{provider}.{role}")
    assert isinstance(spec, Mapping)
    return str(spec["item"]), str(spec["product"])


def service_rate(catalog: Catalog, usage: Usage, item: str) -> Rate:
    """A service price by catalog item for the plan's provider and date (no other provider's).

    Kept for callers that name an item directly; drivers use ``service`` by role so each
    provider's own product is priced.
    """
    p = _service_point(
        catalog, item, provider=usage.provider, region=usage.region, as_of=usage.as_of
    )
    if p is None:
        p = _point(catalog, usage, item, "on_demand")  # raises PriceNotFoundError with the details
    return Rate(usd=p.usd, source=p.cite(usage.as_of), provenance=p.provenance)


def service_rate_at(
    catalog: Catalog, item: str, *, provider: str, region: str, as_of: date
) -> Rate:
    """A service price where it is charged, which for data is not always the cluster's cloud or
    region (a dataset in another cloud pays that cloud's egress; another region's, its rate).

    Only ``provider``'s own prices: its point in force on ``as_of``, else its earliest one dated
    later (the citation says so), else a NOT PRICED $0 rate that the forecast warns about.
    """
    r = _priced(catalog, item, provider=provider, region=region, as_of=as_of, product=item)
    return Rate(usd=r.usd, source=r.source, provenance=r.provenance)


#: Tier items are ``<item>.above_<N>gb``: the price per GB of monthly volume above N GB.
#: A further volume tier of ``item``: ``<item>.above_<N>gb`` (GB per month) or, for a count
#: (metrics per month), ``<item>.above_<N>``.
_TIER = re.compile(r"\.above_(\d+)(gb)?")


@record
class Tier:
    """One volume tier: GB per month from ``from_gb`` up to ``to_gb`` (None: no upper bound)."""

    from_gb: float
    to_gb: float | None
    rate: Rate


def volume_tiers(
    catalog: Catalog, item: str, *, provider: str, region: str, as_of: date
) -> tuple[Tier, ...]:
    """``_look_up_tiers``, remembered (``_remembered``)."""
    return _remembered(
        catalog,
        ("tiers", item, provider, region, as_of),
        lambda: _look_up_tiers(catalog, item, provider=provider, region=region, as_of=as_of),
    )


def _look_up_tiers(
    catalog: Catalog, item: str, *, provider: str, region: str, as_of: date
) -> tuple[Tier, ...]:
    """The monthly volume tiers of a tiered price (internet egress, metrics), lowest first.

    The first tier is ``item`` itself (from 0); each further tier is a price point named
    ``<item>.above_<N>gb`` (or ``<item>.above_<N>`` for a count; ``from_gb``/``to_gb`` are then
    that count). Tiers the catalog lacks are not invented: the last known tier's rate
    applies to all volume above it, which overstates the bill for very large volumes. Only
    ``provider``'s own tiers count: where its first price is dated after ``as_of``, the tiers
    of that date are used (each source says so); a provider without the item is one NOT PRICED
    tier, never another provider's tiers.
    """
    first = _service_point(catalog, item, provider=provider, region=region, as_of=as_of)
    on = as_of if first is None else max(as_of, first.effective_from)
    bounds = sorted(
        {
            (int(m.group(1)), p.item)
            for p in catalog.prices
            if p.provider == provider
            and p.effective_from <= on
            and p.item.startswith(item)
            and (m := _TIER.fullmatch(p.item.removeprefix(item))) is not None
        }
    )
    names = [(0.0, item), *((float(b), name) for b, name in bounds)]
    rates = [
        (lo, service_rate_at(catalog, name, provider=provider, region=region, as_of=as_of))
        for lo, name in names
    ]
    return tuple(
        Tier(from_gb=lo, to_gb=rates[i + 1][0] if i + 1 < len(rates) else None, rate=r)
        for i, (lo, r) in enumerate(rates)
    )
