"""Catalog look-ups: the indexed, immutable ``Catalog`` and every question asked of it
(hardware by id, assumptions by key, the price point in force on a day, zones, Spot Advisor).

Unknown names get a "did you mean"; a missing price names the item, option, region and date
and what *is* available. Built only by ``trainbill.catalog.loading.load_catalog``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from datetime import date
from types import MappingProxyType
from typing import Any

from trainbill._record import record
from trainbill.catalog.rows import (
    Accelerator,
    Assumption,
    BillRates,
    Instance,
    PricePoint,
    SpotAdvisorRow,
    accelerator_key,
)
from trainbill.errors import CatalogSchemaError, PriceNotFoundError, suggest

__all__ = ["REFERENCE_PRICE", "Catalog"]

#: Words in the source of a price point taken from another region because the plan's region
#: has none, for the reader; code reads ``PricePoint.stands_in_for`` / ``provenance``.
REFERENCE_PRICE = "price used: no"
#: The plan field a price date error names (the catalog knows no plan; this is its name there).
_AS_OF_FIELD = "prices.as_of"


@record
class Catalog:
    """Indexed, immutable catalog. Build it with ``load_catalog``."""

    accelerators: Mapping[str, Accelerator]
    instances: Mapping[str, Instance]
    prices: tuple[PricePoint, ...]
    spot_advisor: tuple[SpotAdvisorRow, ...]
    assumptions: Mapping[str, Assumption]
    version: str
    snapshot: date
    overlays: tuple[str, ...] = ()
    #: Overhead rates fitted from bills, in the order given (a later one's categories win);
    #: empty for list prices only (``trainbill.calibration.calibrate_catalog``).
    bill_rates: tuple[BillRates, ...] = ()
    _price_index: Mapping[tuple[str, str, str, str], tuple[PricePoint, ...]] = field(
        default_factory=dict, repr=False
    )
    _regions: Mapping[str, frozenset[str]] = field(default_factory=dict, repr=False)
    #: (provider, zone ID) -> region, from the ``zones.<provider>.<region>`` assumptions: asked
    #: once per price key while indexing, so a scan of every assumption each time cost more
    #: than the rest of the index (start-up, issue #21).
    _zone_regions: Mapping[tuple[str, str], str] = field(default_factory=dict, repr=False)
    #: Every name an accelerator is looked up by (its id and its aliases, ``accelerator_key``
    #: form) -> its id.
    _accel_names: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        names = {acc.id: acc.id for acc in self.accelerators.values()}
        for acc in self.accelerators.values():
            for name in acc.aliases:
                if names.setdefault(name, acc.id) != acc.id:
                    # Two rows of one file, or an overlay's alias meeting the packaged
                    # catalog's: the lookup would depend on row order.
                    msg = (
                        f"accelerators.csv: alias {name!r} names both {names[name]} and {acc.id}; "
                        "give it to one of them"
                    )
                    raise CatalogSchemaError(msg)
        object.__setattr__(self, "_accel_names", MappingProxyType(names))
        zone_regions: dict[tuple[str, str], str] = {}
        for key, a in self.assumptions.items():
            parts = key.split(".", 2)
            if parts[0] == "zones" and len(parts) == 3 and isinstance(a.value, list | tuple):
                for zone in a.value:
                    zone_regions.setdefault((parts[1], str(zone)), parts[2])
        object.__setattr__(self, "_zone_regions", MappingProxyType(zone_regions))
        index: dict[tuple[str, str, str, str], list[PricePoint]] = {}
        for p in self.prices:
            index.setdefault((p.provider, p.region, p.item, p.option), []).append(p)
        frozen = {k: tuple(sorted(v, key=lambda p: p.effective_from)) for k, v in index.items()}
        object.__setattr__(self, "_price_index", MappingProxyType(frozen))
        regions: dict[str, set[str]] = {}
        for provider, region, _, _ in frozen:
            if (
                self.zone_region(provider, region) is None
            ):  # zone-level price points are not regions
                regions.setdefault(provider, set()).add(region)
        object.__setattr__(
            self, "_regions", MappingProxyType({k: frozenset(v) for k, v in regions.items()})
        )

    # --- hardware -------------------------------------------------------------------------
    def accelerator(self, accel_id: str) -> Accelerator:
        """Look up an accelerator by id (``h100``) or any name it is sold under (``A100``,
        ``NVIDIA H100 SXM5``: ``Accelerator.aliases``); unknown names get a "did you mean"."""
        key = accelerator_key(accel_id)
        found = self._accel_names.get(key)
        if found is None:
            msg = (
                f"unknown GPU/accelerator {accel_id!r}."
                f"{suggest(key, self.accelerators) or suggest(key, self._accel_names)} "
                f"Known: {', '.join(sorted(self.accelerators))}"
            )
            raise PriceNotFoundError(msg)
        return self.accelerators[found]

    def accelerator_namesakes(self, accel_id: str) -> tuple[str, ...]:
        """Other parts a name could mean: ``a100`` reads as ``a100-40gb`` (its alias) but
        ``a100-80gb`` is an A100 too, so a forecast says which one it priced. Empty for an id,
        an alias no other id extends, or an unknown name."""
        key = accelerator_key(accel_id)
        found = self._accel_names.get(key)
        if found is None or found == key:
            return ()
        return tuple(sorted(i for i in self.accelerators if i != found and i.startswith(key + "-")))

    def instance(self, name: str) -> Instance:
        """Look up an instance type; unknown names get a "did you mean"."""
        try:
            return self.instances[name]
        except KeyError:
            msg = (
                f"unknown instance type {name!r}.{suggest(name, self.instances)} "
                f"Known: {', '.join(sorted(self.instances))}"
            )
            raise PriceNotFoundError(msg) from None

    def instances_with(self, accel_id: str, provider: str | None = None) -> tuple[Instance, ...]:
        """Instances holding an accelerator, largest first (training wants whole nodes)."""
        found = [
            i
            for i in self.instances.values()
            if i.accelerator == accel_id and (provider is None or i.provider == provider)
        ]
        return tuple(sorted(found, key=lambda i: (-i.accelerator_count, i.instance)))

    # --- assumptions ----------------------------------------------------------------------
    def assumption(self, key: str) -> Assumption:
        """An assumption by dotted key (``reliability.straggler_cv``)."""
        try:
            return self.assumptions[key]
        except KeyError:
            msg = f"catalog has no assumption {key!r}.{suggest(key, self.assumptions)}"
            raise CatalogSchemaError(msg) from None

    def value(self, key: str) -> Any:
        """Shorthand for ``assumption(key).value``."""
        return self.assumption(key).value

    def table(self, key: str) -> Mapping[str, Any] | None:
        """A table-valued assumption (``services.aws.block_storage``), or None when the catalog
        has none under ``key``: the tables that exist per provider (which product fills a
        service role, the file-system sizes a cloud sells) are simply absent for a provider
        without that product."""
        if key not in self.assumptions:
            return None
        value = self.value(key)
        if not isinstance(value, Mapping):
            msg = f"catalog assumption {key!r} must be a table, got {value!r}"
            raise CatalogSchemaError(msg)
        return value

    # --- prices ---------------------------------------------------------------------------
    def reference_region(self, provider: str) -> str:
        """The region whose prices stand in when a plan's region has none."""
        return str(self.value(f"defaults.cluster.region_{provider}"))

    def regions(self, provider: str) -> frozenset[str]:
        """Regions that have at least one price point for ``provider``."""
        return self._regions.get(provider, frozenset())

    # --- zones ----------------------------------------------------------------------------
    def zones(self, provider: str, region: str) -> tuple[str, ...] | None:
        """The zones of a region (AWS: AZ IDs such as ``use1-az1``), or None when the catalog
        has no zone list for it (``zones.<provider>.<region>`` in assumptions.toml)."""
        a = self.assumptions.get(f"zones.{provider}.{region}")
        return None if a is None else tuple(str(z) for z in a.value)

    def zone_region(self, provider: str, zone: str) -> str | None:
        """The region a zone ID belongs to, or None when ``zone`` is no zone the catalog lists."""
        return self._zone_regions.get((provider, zone))

    def zone_price(
        self, item: str, option: str, *, provider: str, zone: str, as_of: date
    ) -> PricePoint | None:
        """The price point of one zone in force on ``as_of`` (prices.csv rows whose ``region`` is a
        zone ID), or None: never another zone's or the region's price (callers fall back and say
        so)."""
        valid = [
            p
            for p in self._price_index.get((provider, zone, item, option), ())
            if p.effective_from <= as_of
        ]
        return valid[-1] if valid else None

    def history(
        self, item: str, option: str, *, provider: str, region: str
    ) -> tuple[PricePoint, ...]:
        """Every price point of an item/option in a region, oldest first."""
        return self._price_index.get((provider, region, item, option), ())

    def _candidates(
        self, item: str, option: str, provider: str, region: str
    ) -> tuple[PricePoint, ...]:
        """Price points for the region, else the reference region, else any region."""
        for r in (region, self.reference_region(provider)):
            points = self._price_index.get((provider, r, item, option), ())
            if points:
                return points
        # Any region at all (e.g. Azure H200 is only priced in eastus2).
        for (prov, _r, it, opt), points in self._price_index.items():
            if prov == provider and it == item and opt == option:
                return points
        return ()

    def find_price(
        self, item: str, option: str, *, provider: str, region: str, as_of: date
    ) -> PricePoint | None:
        """Like ``price`` but ``None`` when there is no point: for callers with a fallback.

        Cheap on a miss (no error message or suggestions are built), which matters because the
        drivers probe optional prices (Savings Plan rates, non-AWS services) on every forecast.
        """
        valid = [
            p for p in self._candidates(item, option, provider, region) if p.effective_from <= as_of
        ]
        if not valid:
            return None
        chosen = valid[-1]
        if chosen.region != region:
            chosen = PricePoint(
                provider=chosen.provider,
                region=chosen.region,
                item=chosen.item,
                option=chosen.option,
                unit=chosen.unit,
                usd=chosen.usd,
                effective_from=chosen.effective_from,
                source=f"{chosen.source} [{chosen.region} {REFERENCE_PRICE} {region} price point]",
                stands_in_for=region,
            )
        return chosen

    def price(
        self, item: str, option: str, *, provider: str, region: str, as_of: date
    ) -> PricePoint:
        """The price point in force on ``as_of``: the newest with ``effective_from <= as_of``.

        Falls back to the provider's reference region (the only one most services are priced
        in here) and says so in the returned point's source. Raises ``PriceNotFoundError``
        naming the item, option, region and date, and what *is* available.
        """
        found = self.find_price(item, option, provider=provider, region=region, as_of=as_of)
        if found is not None:
            return found
        candidates = self._candidates(item, option, provider, region)
        if not candidates:
            options = sorted({k[3] for k in self._price_index if k[0] == provider and k[2] == item})
            hint = f" Options with prices: {', '.join(options)}." if options else ""
            known = {k[2] for k in self._price_index if k[0] == provider}
            msg = (
                f"no {option} price for {item!r} ({provider}, {region}).{hint}"
                f"{'' if options else suggest(item, known)}"
            )
            raise PriceNotFoundError(msg)
        first = candidates[0].effective_from
        inst = self.instances.get(item)
        if inst is not None and inst.launched is not None and as_of < inst.launched:
            msg = (
                f"{item} was not sold on {as_of.isoformat()}: it launched on "
                f"{inst.launched.isoformat()} (catalog instances.csv, launched). To fix: use "
                f"[prices] as_of (--as-of) on or after {inst.launched.isoformat()}, or an "
                "instance sold on that day."
            )
            raise PriceNotFoundError(msg, field=_AS_OF_FIELD)
        msg = (
            f"no {option} price for {item!r} on {as_of.isoformat()}: the catalog's first "
            f"price point is {first.isoformat()}. To fix: use [prices] as_of >= {first}."
        )
        raise PriceNotFoundError(msg, field=_AS_OF_FIELD)

    def spot_row(
        self, instance: str, *, provider: str, region: str, as_of: date
    ) -> SpotAdvisorRow | None:
        """The newest Spot Advisor observation on or before ``as_of`` (or None)."""
        rows = [
            r
            for r in self.spot_advisor
            if r.provider == provider
            and r.instance == instance
            and r.region == region
            and r.observed <= as_of
        ]
        return max(rows, key=lambda r: r.observed) if rows else None
