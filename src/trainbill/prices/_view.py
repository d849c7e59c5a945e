"""What an instance costs, per purchase option, from a loaded catalog (pure, no I/O).

``prices show`` and ``prices list`` need the same answer the forecast uses: the price point in
force on a date, per option. Commitment rates are shown only where the catalog holds the
provider's published rate (``sp_*``, ``compute_sp_*``, Standard / Convertible RI): a rate worked out
of a claimed discount (the seed article's 42 %/55 %) is a claim, not a price, and is never shown.
"""

from __future__ import annotations

from datetime import date

from trainbill._record import record
from trainbill.catalog import STAND_IN_MARK, Catalog, PricePoint
from trainbill.catalog.rows import accelerator_key
from trainbill.errors import PriceNotFoundError, SpecError, suggest

__all__ = [
    "INSTANCE_UNITS",
    "InstanceQuote",
    "OptionPrice",
    "instance_quote",
    "price_table",
]

#: Units of price points that describe a whole rentable machine (or TPU chip).
INSTANCE_UNITS = frozenset({"instance-hour", "chip-hour"})
_SHOWN_OPTIONS = (
    "on_demand", "spot", "sp_1yr", "sp_3yr", "compute_sp_1yr", "compute_sp_3yr",
    "standard_ri_1yr", "standard_ri_3yr", "convertible_ri_1yr", "convertible_ri_3yr",
    "capacity_block",
)  # fmt: skip


@record
class OptionPrice:
    """One option's rate: a price point of the catalog."""

    option: str
    usd_per_hour: float
    basis: str  # always "price_point" (kept in the JSON schema; claimed discounts are not shown)
    effective_from: date
    region: str
    source: str


@record
class InstanceQuote:
    """Everything ``prices show`` reports for an instance on a date."""

    provider: str
    instance: str
    region: str
    accelerator: str | None
    accelerator_count: int | None
    unit: str
    as_of: date
    options: dict[str, OptionPrice]
    history: tuple[PricePoint, ...]
    #: A catalog stand-in (the instance or its on-demand price marked ``STAND-IN``): a figure
    #: no provider sells at, never shown or ranked as a provider price.
    stand_in: bool = False

    def usd(self, option: str) -> float | None:
        """Rate for an option, or None when the catalog has none."""
        found = self.options.get(option)
        return found.usd_per_hour if found else None

    def point(self, option: str) -> PricePoint | None:
        """The option's rate as a ``PricePoint`` (for ``stale_warning`` and ledger sources)."""
        o = self.options.get(option)
        if o is None:
            return None
        return PricePoint(
            provider=self.provider, region=o.region, item=self.instance, option=option,
            unit=self.unit, usd=o.usd_per_hour, effective_from=o.effective_from, source=o.source,
        )  # fmt: skip

    def to_json(self) -> dict[str, object]:
        """JSON-ready dict (the schema of ``prices show --json``)."""
        on_demand = self.options.get("on_demand")
        out: dict[str, object] = {
            "instance": self.instance,
            "provider": self.provider,
            "region": self.region,
            "accelerator": self.accelerator,
            "accelerator_count": self.accelerator_count,
            "unit": self.unit,
            "as_of": self.as_of.isoformat(),
            "on_demand_usd_per_hour": self.usd("on_demand"),
            "spot_usd_per_hour": self.usd("spot"),
            "sp_1yr_usd_per_hour": self.usd("sp_1yr"),
            "sp_3yr_usd_per_hour": self.usd("sp_3yr"),
            "capacity_block_usd_per_hour": self.usd("capacity_block"),
            "source": on_demand.source if on_demand else None,
            "stand_in": self.stand_in,
            "prices": {
                name: {
                    "usd_per_hour": o.usd_per_hour,
                    "basis": o.basis,
                    "effective_from": o.effective_from.isoformat(),
                    "region": o.region,
                    "source": o.source,
                }
                for name, o in self.options.items()
            },
            "history": [
                {
                    "option": p.option,
                    "region": p.region,
                    "usd": p.usd,
                    "unit": p.unit,
                    "effective_from": p.effective_from.isoformat(),
                    "source": p.source,
                }
                for p in self.history
            ],
        }
        return out


def _point(
    catalog: Catalog, item: str, option: str, provider: str, region: str, as_of: date
) -> PricePoint | None:
    try:
        return catalog.price(item, option, provider=provider, region=region, as_of=as_of)
    except PriceNotFoundError:
        return None


def instance_quote(
    catalog: Catalog,
    instance: str,
    *,
    as_of: date,
    region: str | None = None,
    provider: str | None = None,
) -> InstanceQuote:
    """Rates for an instance on ``as_of`` (region defaults to the provider's reference region).

    Instances not in ``instances.csv`` (e.g. found by a price update) are accepted when the
    catalog has price points for them; ``provider`` disambiguates if needed.
    """
    known = catalog.instances.get(instance)
    if known is not None:
        prov = known.provider
    else:
        provs = sorted(
            {p.provider for p in catalog.prices if p.item == instance and p.unit in INSTANCE_UNITS}
        )
        if provider is not None:
            provs = [p for p in provs if p == provider]
        if not provs:
            catalog.instance(instance)  # raises with "did you mean"
        prov = provs[0]
    known_regions = catalog.regions(prov)
    if region is not None and known_regions and region not in known_regions:
        # Otherwise the reference region's prices were shown under this name ("aws
        # us-central1" with us-east-1's rates): a GCP region given for an AWS instance.
        msg = (
            f"{region!r} is no {prov} region with prices in the catalog; {prov} regions: "
            f"{', '.join(sorted(known_regions))}.{suggest(region, known_regions)}"
        )
        raise SpecError(msg, field="region")
    reg = region or catalog.reference_region(prov)
    options: dict[str, OptionPrice] = {}
    for option in _SHOWN_OPTIONS:
        p = _point(catalog, instance, option, prov, reg, as_of)
        if p is not None:
            options[option] = OptionPrice(
                option=option, usd_per_hour=p.usd, basis="price_point",
                effective_from=p.effective_from, region=p.region, source=p.cite(),
            )  # fmt: skip
    history = tuple(
        sorted(
            (p for p in catalog.prices if p.provider == prov and p.item == instance),
            key=lambda p: (p.region, p.option, p.effective_from),
        )
    )
    units = {p.unit for p in history}
    unit = (
        units.pop()
        if len(units) == 1
        else ("chip-hour" if known and known.billing == "chip" else "instance-hour")
    )
    return InstanceQuote(
        provider=prov,
        instance=instance,
        region=reg,
        accelerator=known.accelerator if known else None,
        accelerator_count=known.accelerator_count if known else None,
        unit=unit,
        as_of=as_of,
        options=options,
        history=history,
        stand_in=bool(known and known.stand_in)
        or any(o.source.lstrip().startswith(STAND_IN_MARK) for o in options.values()),
    )


def price_table(
    catalog: Catalog,
    *,
    as_of: date,
    gpu: str | None = None,
    provider: str | None = None,
    region: str | None = None,
) -> tuple[InstanceQuote, ...]:
    """One quote per (provider, region, instance) that has instance prices, filtered.

    ``gpu`` matches the accelerator id (``h100``), its family (``a100`` matches
    ``a100-40gb`` and ``a100-80gb``) or another name it is sold under (``H100 SXM5``: the
    part it names); unknown names raise with a suggestion.
    """
    gpu_id = accelerator_key(gpu) if gpu else None

    def gpu_matches(accel: str) -> bool:
        return accel == gpu_id or accel.split("-", 1)[0] == gpu_id

    if gpu is not None and not any(gpu_matches(a) for a in catalog.accelerators):
        gpu_id = catalog.accelerator(gpu).id  # raises with "did you mean"
    keys = sorted(
        {
            (p.provider, p.region, p.item)
            for p in catalog.prices
            if p.unit in INSTANCE_UNITS
            and p.effective_from <= as_of
            # A zone's own spot price (region column = AZ ID) is not another region to list.
            and catalog.zone_region(p.provider, p.region) is None
        }
    )
    out: list[InstanceQuote] = []
    for prov, reg, item in keys:
        if provider is not None and prov != provider:
            continue
        if region is not None and reg != region:
            continue
        inst = catalog.instances.get(item)
        if gpu_id is not None and (inst is None or not gpu_matches(inst.accelerator)):
            continue
        out.append(instance_quote(catalog, item, as_of=as_of, region=reg, provider=prov))
    return tuple(out)
