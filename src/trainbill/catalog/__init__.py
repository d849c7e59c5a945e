"""Catalog: packaged, dated, sourced prices and hardware figures, plus user overlays.

The catalog is data, not code: CSV tables and ``assumptions.toml`` inside the wheel, each row
carrying its source and date, indexed here into frozen rows. Prices are *price points* with an
``effective_from`` date, so history is kept and ``price(..., as_of=...)`` answers "what did this
cost on that day" (p5.48xlarge: $98.32 until the June-2025 cut, $55.04 after).

Overlays (a user's negotiated rates via ``--catalog DIR``/``TRAINBILL_CATALOG``, or the price
cache written by ``trainbill prices update``) are directories holding any of the same CSV files;
they are validated exactly like the packaged data and their rows win over packaged rows with
the same key and date. Loading does no network I/O, ever.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import math
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trainbill.errors import (
    CatalogSchemaError,
    PriceNotFoundError,
    suggest,
    unreadable_value_message,
)

__all__ = [
    "OPTIONS",
    "PROVIDERS",
    "SCHEMA_VERSION",
    "STAND_IN_MARK",
    "Accelerator",
    "Assumption",
    "Catalog",
    "Instance",
    "PricePoint",
    "SpotAdvisorRow",
    "load_catalog",
    "packaged_data_dir",
]

#: Bumped whenever a table's columns change; overlays and caches must match it.
SCHEMA_VERSION = 1
PROVIDERS: tuple[str, ...] = ("aws", "gcp", "azure")
#: How a row's source marks a stand-in: a figure no provider publishes, kept so a what-if (an
#: H800 cluster, a trn2 On-Demand rate) can be priced at all. The planner never recommends a
#: stand-in unless asked (``optimize(allow_stand_ins=True)``, ``--allow-stand-ins``).
STAND_IN_MARK = "STAND-IN"
#: Purchase options a price point can carry. Commitment rates are the provider's published
#: effective hourly rate under a commitment, one option per kind and term: ``sp_<term>`` is an
#: AWS EC2 Instance Savings Plan (what ``trainbill prices update aws`` writes), a GCP
#: committed-use or an Azure reservation rate; ``compute_sp_<term>`` an AWS Compute Savings
#: Plan; ``sagemaker_sp_<term>`` an AWS SageMaker Savings Plan on an ``ml.*`` item. The payment
#: option (No/Partial/All Upfront) a rate assumes is stated in its source.
OPTIONS: tuple[str, ...] = (
    "on_demand", "spot", "sp_1yr", "sp_3yr", "compute_sp_1yr", "compute_sp_3yr",
    "sagemaker_sp_1yr", "sagemaker_sp_3yr", "capacity_block",
)  # fmt: skip

_TABLE_COLUMNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "accelerators.csv": (
            "id", "name", "vendor", "peak_bf16_tflops", "peak_fp8_tflops", "hbm_gb",
            "hbm_tbps", "intra_node_gbytes_per_s", "tdp_w", "launched", "source", "as_of",
        ),
        "instances.csv": (
            "provider", "instance", "accelerator", "accelerator_count", "vcpus", "memory_gib",
            "network_gbps", "billing", "source", "as_of", "launched",
        ),
        "prices.csv": (
            "provider", "region", "item", "option", "unit", "usd", "effective_from", "source",
        ),
        "spot_advisor.csv": (
            "provider", "region", "instance", "interruption_bucket", "savings_pct", "observed",
            "source",
        ),
    }
)  # fmt: skip
#: Columns added after schema v1 was published: a file without them (an overlay written
#: before) is still read, with the column blank.
_LATER_COLUMNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"accelerators.csv": ("launched",), "instances.csv": ("launched",)}
)
#: How far ahead of today an overlay price point may be dated (an announced price change or a
#: contract starting soon); later dates are typos that would silently never apply.
_MAX_FUTURE_DAYS = 366


@dataclass(frozen=True, slots=True, kw_only=True)
class Accelerator:
    """One accelerator model's datasheet figures (dense, no sparsity)."""

    id: str
    name: str
    vendor: str
    peak_bf16_tflops: float
    peak_fp8_tflops: float | None
    hbm_gb: float
    hbm_tbps: float
    intra_node_gbytes_per_s: float
    #: When the architecture's first datacenter part became generally available (shipping
    #: systems, a public cloud instance, or in-house production for TPUs); the time model's
    #: software-maturity factor counts from it. ``None``: unknown, software taken as mature.
    launched: date | None
    source: str
    as_of: date

    def peak_tflops(self, precision: str) -> float:
        """Dense peak for a precision; FP8 falls back to BF16 on parts without FP8 units."""
        if precision == "fp8" and self.peak_fp8_tflops is not None:
            return self.peak_fp8_tflops
        return self.peak_bf16_tflops


@dataclass(frozen=True, slots=True, kw_only=True)
class Instance:
    """A rentable machine: which accelerators, how many, and its network."""

    provider: str
    instance: str
    accelerator: str
    accelerator_count: int
    vcpus: int
    memory_gib: float
    network_gbps: float
    billing: str  # "instance" (per instance-hour) or "chip" (per chip-hour, TPUs)
    source: str
    as_of: date
    #: When the provider first sold it (general availability, or public preview where that is
    #: when it could first be rented): no run can be priced on it before this day. ``None``:
    #: unknown (a stand-in, or an overlay written before the column existed).
    launched: date | None = None

    @property
    def stand_in(self) -> bool:
        """A catalog stand-in (source begins ``STAND-IN``), not an instance any cloud sells."""
        return self.source.lstrip().startswith(STAND_IN_MARK)


@dataclass(frozen=True, slots=True, kw_only=True)
class PricePoint:
    """A price observed from a source, valid from ``effective_from`` until superseded."""

    provider: str
    region: str
    item: str
    option: str
    unit: str
    usd: float
    effective_from: date
    source: str

    @property
    def stand_in(self) -> bool:
        """A stand-in figure (source begins ``STAND-IN``), not a price the provider publishes."""
        return self.source.lstrip().startswith(STAND_IN_MARK)

    def cite(self, on: date | None = None) -> str:
        """Source and date in one string, for a ledger line's ``source`` field.

        With ``on`` (the plan's price date) it also says how old the price is that day, so a
        reader sees a 700-day-old list price for what it is without opening the catalog.
        """
        text = f"{self.source}; price point effective {self.effective_from.isoformat()}"
        if on is None:
            return text
        age = (on - self.effective_from).days
        if age >= 0:
            return f"{text} (price dated {self.effective_from.isoformat()}, {age} days old on {on.isoformat()})"
        return (
            f"{text} (price dated {self.effective_from.isoformat()}, {-age} days AFTER the plan's price date "
            f"{on.isoformat()}: the earliest {self.provider} price point, none is older)"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotAdvisorRow:
    """A Spot Advisor observation: interruption bucket and savings for an instance/region."""

    provider: str
    region: str
    instance: str
    interruption_bucket: str
    savings_pct: float
    observed: date
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Assumption:
    """A modelling assumption or default, with its source: never a bare constant in code."""

    key: str
    value: Any
    unit: str
    source: str
    as_of: date

    def cite(self) -> str:
        """``key = value unit (source, as of date)``, for bases and ``--explain``."""
        return f"{self.key} = {self.value} {self.unit} ({self.source}; as of {self.as_of})"


@dataclass(frozen=True, slots=True, kw_only=True)
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
    _price_index: Mapping[tuple[str, str, str, str], tuple[PricePoint, ...]] = field(
        default_factory=dict, repr=False
    )
    _regions: Mapping[str, frozenset[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
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
        """Look up an accelerator id (``h100``); unknown ids get a "did you mean"."""
        key = accel_id.strip().lower()
        try:
            return self.accelerators[key]
        except KeyError:
            msg = (
                f"unknown GPU/accelerator {accel_id!r}.{suggest(key, self.accelerators)} "
                f"Known: {', '.join(sorted(self.accelerators))}"
            )
            raise PriceNotFoundError(msg) from None

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
        prefix = f"zones.{provider}."
        for key, a in self.assumptions.items():
            if key.startswith(prefix) and zone in a.value:
                return key.removeprefix(prefix)
        return None

    def zone_price(
        self, item: str, option: str, *, provider: str, zone: str, as_of: date
    ) -> PricePoint | None:
        """The price point of one zone in force on ``as_of`` (prices.csv rows whose ``region`` is a
        zone ID), or None: never another zone's or the region's price (callers fall back and say so)."""
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
                source=f"{chosen.source} [{chosen.region} price used: no {region} price point]",
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
                f"{item} was not sold on {as_of.isoformat()}: it launched on {inst.launched.isoformat()} "
                f"(catalog instances.csv, launched). To fix: use [prices] as_of (--as-of) on or after "
                f"{inst.launched.isoformat()}, or an instance sold on that day."
            )
            raise PriceNotFoundError(msg)
        msg = (
            f"no {option} price for {item!r} on {as_of.isoformat()}: the catalog's first "
            f"price point is {first.isoformat()}. To fix: use [prices] as_of >= {first}."
        )
        raise PriceNotFoundError(msg)

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


# --- loading ------------------------------------------------------------------------------
def packaged_data_dir() -> Path:
    """Directory of the packaged catalog data (inside the installed wheel)."""
    return Path(str(resources.files("trainbill.catalog") / "data"))


def _parse_date(value: str, where: str, *, latest: date | None = None) -> date:
    try:
        parsed = date.fromisoformat(value.strip())
    except ValueError:
        msg = f"{where}: {value!r} is not a date (expected YYYY-MM-DD)"
        raise CatalogSchemaError(msg) from None
    if latest is not None and parsed > latest:
        msg = (
            f"{where}: {parsed.isoformat()} is in the future (latest allowed {latest.isoformat()})"
        )
        raise CatalogSchemaError(msg)
    return parsed


def _parse_int(value: str, where: str, *, minimum: int = 0) -> int:
    number = _req(_parse_float(value, where, minimum=minimum))
    if not number.is_integer():
        msg = f"{where}: {value.strip()!r} is not a whole number"
        raise CatalogSchemaError(msg)
    return int(number)


def _parse_float(
    value: str, where: str, *, optional: bool = False, minimum: float = 0.0
) -> float | None:
    if value.strip() == "":
        if optional:
            return None
        msg = f"{where}: value is required"
        raise CatalogSchemaError(msg)
    try:
        number = float(value)
    except ValueError:
        msg = f"{where}: {value!r} is not a number"
        raise CatalogSchemaError(msg) from None
    if not math.isfinite(number):
        msg = (
            f"{where}: {value.strip()!r} is not a finite number (expected a number >= {minimum:g})"
        )
        raise CatalogSchemaError(msg)
    if number < minimum:
        msg = f"{where}: {number} is below the allowed minimum {minimum}"
        raise CatalogSchemaError(msg)
    return number


def _req(value: float | None) -> float:
    assert value is not None  # guaranteed by optional=False
    return value


#: Columns that must not be blank in every row (besides ``source``).
_REQUIRED_TEXT: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "accelerators.csv": ("id", "name", "vendor"),
        "instances.csv": ("provider", "instance", "accelerator", "billing"),
        "prices.csv": ("provider", "region", "item", "option", "unit"),
        "spot_advisor.csv": ("provider", "region", "instance", "interruption_bucket"),
    }
)


def _read_table(path: Path) -> list[tuple[int, dict[str, str]]]:
    """Rows of a catalog CSV with their physical line numbers (a UTF-8 BOM is accepted)."""
    name = path.name
    expected = _TABLE_COLUMNS[name]
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = tuple(h.strip() for h in reader.fieldnames or ())
            if not header:
                msg = f"{path}: empty file; expected a header line {','.join(expected)}"
                raise CatalogSchemaError(msg)
            later = _LATER_COLUMNS.get(name, ())
            legacy = header == tuple(c for c in expected if c not in later)
            if header != expected and not legacy:
                missing = [c for c in expected if c not in header]
                extra = [c for c in header if c not in expected]
                repeated = sorted({c for c in header if header.count(c) > 1})
                detail = (
                    "".join(
                        (
                            f" missing column(s) {', '.join(missing)};" if missing else "",
                            f" unknown column(s) {', '.join(extra)};" if extra else "",
                            f" repeated column(s) {', '.join(repeated)};" if repeated else "",
                        )
                    )
                    or " columns out of order;"
                )
                msg = (
                    f"{path}: columns {list(header)} do not match schema v{SCHEMA_VERSION}:{detail} "
                    f"expected {list(expected)}. To fix: regenerate the file or correct its header."
                )
                raise CatalogSchemaError(msg)
            reader.fieldnames = list(header)
            rows = []
            for row in reader:
                if legacy:
                    row.update(dict.fromkeys(later, ""))
                rows.append((reader.line_num, row))
    except UnicodeDecodeError as exc:
        msg = f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}). To fix: save it as UTF-8 CSV."
        raise CatalogSchemaError(msg) from None
    except csv.Error as exc:
        msg = f"{path}: not a readable CSV file ({exc})"
        raise CatalogSchemaError(msg) from None
    except OSError as exc:
        msg = f"{path}: cannot read catalog file ({exc.strerror or exc.__class__.__name__})"
        raise CatalogSchemaError(msg) from None
    for i, row in rows:
        if None in row or any(v is None for v in row.values()):
            # Count against the file's own header: one written before a later column has fewer.
            msg = f"{path}, line {i}: wrong number of fields (expected {len(header)}: {','.join(header)})"
            if legacy and None in row:
                msg += f"; to give {', '.join(later)}, add the column(s) to the header: {','.join(expected)}"
            raise CatalogSchemaError(msg)
        if not row.get("source", "").strip():
            msg = f"{path}, line {i}: every row needs a source"
            raise CatalogSchemaError(msg)
        for col in _REQUIRED_TEXT[name]:
            if not row[col].strip():
                msg = f"{path}, line {i}, {col}: value is required"
                raise CatalogSchemaError(msg)
    return rows


def _no_duplicates(path: Path, keyed: Iterable[tuple[int, tuple[str, ...]]], what: str) -> None:
    """Two rows of one file with the same key: which one wins would be an accident of order."""
    seen: dict[tuple[str, ...], int] = {}
    for line, key in keyed:
        if key in seen:
            msg = (
                f"{path}, line {line}: duplicate row for {what} {', '.join(key)} "
                f"(also on line {seen[key]}). To fix: keep one of them."
            )
            raise CatalogSchemaError(msg)
        seen[key] = line


def _accelerators(path: Path, today: date | None = None) -> list[Accelerator]:
    out = []
    latest = None if today is None else today + timedelta(days=_MAX_FUTURE_DAYS)
    rows = _read_table(path)
    _no_duplicates(path, ((i, (r["id"].strip().lower(),)) for i, r in rows), "id")
    for i, r in rows:
        w = f"{path}, line {i}"
        out.append(
            Accelerator(
                id=r["id"].strip().lower(),
                name=r["name"],
                vendor=r["vendor"],
                peak_bf16_tflops=_req(
                    _parse_float(r["peak_bf16_tflops"], f"{w}, peak_bf16_tflops", minimum=1e-9)
                ),
                peak_fp8_tflops=_parse_float(
                    r["peak_fp8_tflops"], f"{w}, peak_fp8_tflops", optional=True, minimum=1e-9
                ),
                hbm_gb=_req(_parse_float(r["hbm_gb"], f"{w}, hbm_gb", minimum=1e-9)),
                hbm_tbps=_req(_parse_float(r["hbm_tbps"], f"{w}, hbm_tbps")),
                intra_node_gbytes_per_s=_req(
                    _parse_float(r["intra_node_gbytes_per_s"], f"{w}, intra_node_gbytes_per_s")
                ),
                # A launch date more than a year ahead is a typo (2099 for 2019), not an announced
                # chip: it would silently make every run on the chip brand-new (maturity at its lowest).
                launched=(
                    _parse_date(r["launched"], f"{w}, launched", latest=latest)
                    if r["launched"].strip()
                    else None
                ),
                source=r["source"],
                as_of=_parse_date(r["as_of"], f"{w}, as_of", latest=today),
            )
        )
    return out


def _instances(path: Path, today: date | None = None) -> list[Instance]:
    out = []
    rows = _read_table(path)
    _no_duplicates(path, ((i, (r["instance"].strip(),)) for i, r in rows), "instance")
    for i, r in rows:
        w = f"{path}, line {i}"
        provider = r["provider"].strip()
        if provider not in PROVIDERS:
            msg = f"{w}, provider: {provider!r} not one of {', '.join(PROVIDERS)}"
            raise CatalogSchemaError(msg)
        billing = r["billing"].strip()
        if billing not in {"instance", "chip"}:
            msg = f"{w}, billing: {billing!r} not one of instance, chip"
            raise CatalogSchemaError(msg)
        out.append(
            Instance(
                provider=provider,
                instance=r["instance"].strip(),
                accelerator=r["accelerator"].strip().lower(),
                accelerator_count=_parse_int(
                    r["accelerator_count"], f"{w}, accelerator_count", minimum=1
                ),
                vcpus=_parse_int(r["vcpus"], f"{w}, vcpus"),
                memory_gib=_req(_parse_float(r["memory_gib"], f"{w}, memory_gib")),
                network_gbps=_req(
                    _parse_float(r["network_gbps"], f"{w}, network_gbps", minimum=1e-9)
                ),
                billing=billing,
                source=r["source"],
                as_of=_parse_date(r["as_of"], f"{w}, as_of", latest=today),
                launched=(
                    _parse_date(r["launched"], f"{w}, launched", latest=today)
                    if r["launched"].strip()
                    else None
                ),
            )
        )
    return out


def _prices(
    path: Path,
    today: date | None = None,
    instances: Mapping[str, Instance] | None = None,
    service_units: Mapping[str, frozenset[str]] | None = None,
) -> list[PricePoint]:
    out = []
    rows = _read_table(path)
    _no_duplicates(
        path,
        (
            (
                i,
                tuple(
                    r[c].strip() for c in ("provider", "region", "item", "option", "effective_from")
                ),
            )
            for i, r in rows
        ),
        "provider, region, item, option, effective_from",
    )
    latest = None if today is None else today + timedelta(days=_MAX_FUTURE_DAYS)
    for i, r in rows:
        w = f"{path}, line {i}"
        option = r["option"].strip()
        if option not in OPTIONS:
            msg = f"{w}, option: {option!r} not one of {', '.join(OPTIONS)}"
            raise CatalogSchemaError(msg)
        provider = r["provider"].strip()
        if provider not in PROVIDERS:
            msg = f"{w}, provider: {provider!r} not one of {', '.join(PROVIDERS)}"
            raise CatalogSchemaError(msg)
        item = r["item"].strip()
        unit = r["unit"].strip()
        if instances is not None:
            _check_unit(item, unit, instances, service_units or {}, w)
        out.append(
            PricePoint(
                provider=provider,
                region=r["region"].strip(),
                item=item,
                option=option,
                unit=unit,
                usd=_req(_parse_float(r["usd"], f"{w}, usd")),
                effective_from=_parse_date(
                    r["effective_from"], f"{w}, effective_from", latest=latest
                ),
                source=r["source"],
            )
        )
    return out


def _check_unit(
    item: str,
    unit: str,
    instances: Mapping[str, Instance],
    service_units: Mapping[str, frozenset[str]],
    where: str,
) -> None:
    """An overlay price's unit must be the one the cost drivers multiply by for that item: the
    packaged price list's unit for a service item (``nat.hours`` is per hour), instance-hours or
    chip-hours for an instance."""
    if item in service_units:
        allowed = tuple(sorted(service_units[item]))
    elif item in instances:
        allowed = ("chip-hour",) if instances[item].billing == "chip" else ("instance-hour",)
    else:
        allowed = ("instance-hour",)  # a CPU instance priced by the hour (extra groups)
    if unit not in allowed:
        kind = "service" if item in service_units else "instance"
        msg = (
            f"{where}, unit: {unit!r} is not the unit of {kind} {item!r}; allowed: {', '.join(allowed)} "
            "(prices are USD per that unit; convert other currencies or periods first)"
        )
        raise CatalogSchemaError(msg)


def _spot(
    path: Path, today: date | None = None, buckets: Iterable[str] | None = None
) -> list[SpotAdvisorRow]:
    out = []
    rows = _read_table(path)
    _no_duplicates(
        path,
        (
            (i, tuple(r[c].strip() for c in ("provider", "region", "instance", "observed")))
            for i, r in rows
        ),
        "provider, region, instance, observed",
    )
    allowed = None if buckets is None else tuple(buckets)
    for i, r in rows:
        w = f"{path}, line {i}"
        provider = r["provider"].strip()
        if provider not in PROVIDERS:
            msg = f"{w}, provider: {provider!r} not one of {', '.join(PROVIDERS)}"
            raise CatalogSchemaError(msg)
        bucket = r["interruption_bucket"].strip()
        if allowed is not None and bucket not in allowed:
            msg = f"{w}, interruption_bucket: {bucket!r} not one of {', '.join(allowed)}"
            raise CatalogSchemaError(msg)
        savings = _req(_parse_float(r["savings_pct"], f"{w}, savings_pct"))
        if savings > 100:
            msg = f"{w}, savings_pct: {savings:g} is above the allowed maximum 100 (a percentage)"
            raise CatalogSchemaError(msg)
        out.append(
            SpotAdvisorRow(
                provider=provider,
                region=r["region"].strip(),
                instance=r["instance"].strip(),
                interruption_bucket=bucket,
                savings_pct=savings,
                observed=_parse_date(r["observed"], f"{w}, observed", latest=today),
                source=r["source"],
            )
        )
    return out


def _assumptions(path: Path, only: str | None = None) -> dict[str, Assumption]:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        msg = f"{path}: invalid TOML: {exc}"
        raise CatalogSchemaError(msg) from None
    except ValueError as exc:  # parsed, but a value cannot be built (a 5,000-digit integer)
        msg = f"{path}: invalid TOML: {unreadable_value_message(exc)}"
        raise CatalogSchemaError(msg) from None
    out: dict[str, Assumption] = {}

    def walk(prefix: str, node: Mapping[str, Any]) -> None:
        for key, val in node.items():
            dotted = f"{prefix}.{key}" if prefix else key
            if isinstance(val, Mapping) and "value" in val and "source" in val:
                missing = {"unit", "as_of"} - set(val)
                if missing:
                    msg = f"{path}: {dotted}: missing {', '.join(sorted(missing))}"
                    raise CatalogSchemaError(msg)
                as_of = val["as_of"]
                out[dotted] = Assumption(
                    key=dotted,
                    value=val["value"],
                    unit=str(val["unit"]),
                    source=str(val["source"]),
                    as_of=as_of
                    if isinstance(as_of, date)
                    else _parse_date(str(as_of), f"{path}: {dotted}.as_of"),
                )
            elif isinstance(val, Mapping):
                walk(dotted, val)
            else:
                msg = f"{path}: {dotted}: expected a table with value, unit, source, as_of"
                raise CatalogSchemaError(msg)

    if only is not None:
        doc = {only: doc.get(only, {})}
    walk("", doc)
    return out


def _packaged_assumptions(data: Path) -> dict[str, Assumption]:
    """``assumptions.toml`` plus the fitted time-model parameters (``time.fit.*``).

    The fit lives in its own file because ``tools/fit_time_model.py`` rewrites it whole; only
    its ``[time.fit]`` table is read as assumptions (its ``[report]`` holds the residuals).
    """
    out = _assumptions(data / "assumptions.toml")
    fit = data / "time_model_fit.toml"
    if fit.exists():
        fitted = _assumptions(fit, only="time")
        clash = set(fitted) & set(out)
        if clash:
            msg = f"{fit}: keys {', '.join(sorted(clash))} also in assumptions.toml"
            raise CatalogSchemaError(msg)
        out.update(fitted)
    return out


def _manifest(data_dir: Path) -> tuple[str, date]:
    doc = tomllib.loads((data_dir / "MANIFEST.toml").read_text(encoding="utf-8"))
    schema = doc.get("schema_version")
    if schema != SCHEMA_VERSION:
        msg = (
            f"{data_dir / 'MANIFEST.toml'}: schema_version {schema} but this trainbill reads "
            f"v{SCHEMA_VERSION}. To fix: upgrade trainbill or regenerate the catalog."
        )
        raise CatalogSchemaError(msg)
    return str(doc["version"]), _parse_date(str(doc["snapshot"]), "MANIFEST.toml snapshot")


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file, as recorded in MANIFEST.toml."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _merge_prices(base: Iterable[PricePoint], over: Iterable[PricePoint]) -> tuple[PricePoint, ...]:
    merged = {(p.provider, p.region, p.item, p.option, p.effective_from): p for p in base}
    for p in over:
        merged[(p.provider, p.region, p.item, p.option, p.effective_from)] = p
    return tuple(merged.values())


def _overlay_schema(directory: Path) -> None:
    marker = directory / "SCHEMA_VERSION"
    if marker.exists():
        text = marker.read_text(encoding="utf-8").strip()
        if text != str(SCHEMA_VERSION):
            msg = (
                f"{marker}: catalog overlay has schema version {text!r}, expected "
                f"{SCHEMA_VERSION}. To fix: re-run 'trainbill prices update' or fix the overlay."
            )
            raise CatalogSchemaError(msg)


def load_catalog(overlays: Sequence[Path | str] = ()) -> Catalog:
    """Load the packaged catalog and apply overlay directories in order (later wins).

    Raises ``CatalogSchemaError`` naming the file, line and column of any bad row.
    """
    if not overlays:
        return _packaged()
    base = _packaged()
    accels = dict(base.accelerators)
    insts = dict(base.instances)
    prices: tuple[PricePoint, ...] = base.prices
    spot = list(base.spot_advisor)
    names = []
    today = datetime.now(UTC).date()
    # Units of the packaged service items (everything priced that is not an instance).
    units: dict[str, set[str]] = {}
    for p in base.prices:
        if p.item not in base.instances:
            units.setdefault(p.item, set()).add(p.unit)
    service_units = {item: frozenset(u) for item, u in units.items()}
    bucket_map = base.assumptions.get("reliability.spot_bucket_monthly_rate")
    buckets = (
        sorted(bucket_map.value)
        if bucket_map is not None and isinstance(bucket_map.value, Mapping)
        else None
    )
    for raw in overlays:
        directory = Path(raw)
        if not directory.is_dir():
            msg = f"catalog overlay {directory} is not a directory (from --catalog or TRAINBILL_CATALOG)"
            raise CatalogSchemaError(msg)
        _overlay_schema(directory)
        known = set(_TABLE_COLUMNS)
        try:
            present = {p.name for p in directory.iterdir() if p.suffix.lower() in {".csv", ".toml"}}
        except OSError as exc:
            msg = f"catalog overlay {directory}: cannot list it ({exc.strerror or exc.__class__.__name__})"
            raise CatalogSchemaError(msg) from None
        unknown = present - known
        if unknown:
            msg = (
                f"{directory}: unknown catalog file(s) {', '.join(sorted(unknown))}; an overlay is read "
                f"only from {', '.join(sorted(known))} (assumptions cannot be overlaid), so these would be ignored"
            )
            raise CatalogSchemaError(msg)
        if (directory / "accelerators.csv").exists():
            accels.update({a.id: a for a in _accelerators(directory / "accelerators.csv", today)})
        if (directory / "instances.csv").exists():
            insts.update({i.instance: i for i in _instances(directory / "instances.csv", today)})
        if (directory / "prices.csv").exists():
            prices = _merge_prices(
                prices, _prices(directory / "prices.csv", today, insts, service_units)
            )
        if (directory / "spot_advisor.csv").exists():
            spot.extend(_spot(directory / "spot_advisor.csv", today, buckets))
        names.append(str(directory))
    _check_references(accels, insts)
    return Catalog(
        accelerators=MappingProxyType(accels),
        instances=MappingProxyType(insts),
        prices=prices,
        spot_advisor=tuple(spot),
        assumptions=base.assumptions,
        version=base.version,
        snapshot=base.snapshot,
        overlays=tuple(names),
    )


def _check_references(accels: Mapping[str, Accelerator], insts: Mapping[str, Instance]) -> None:
    for inst in insts.values():
        if inst.accelerator not in accels:
            msg = f"instance {inst.instance!r} names unknown accelerator {inst.accelerator!r}"
            raise CatalogSchemaError(msg)


@functools.cache
def _packaged() -> Catalog:
    data = packaged_data_dir()
    version, snapshot = _manifest(data)
    accels = {a.id: a for a in _accelerators(data / "accelerators.csv")}
    insts = {i.instance: i for i in _instances(data / "instances.csv")}
    _check_references(accels, insts)
    return Catalog(
        accelerators=MappingProxyType(accels),
        instances=MappingProxyType(insts),
        prices=tuple(_prices(data / "prices.csv")),
        spot_advisor=tuple(_spot(data / "spot_advisor.csv")),
        assumptions=MappingProxyType(_packaged_assumptions(data)),
        version=version,
        snapshot=snapshot,
    )
