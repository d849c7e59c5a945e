"""Catalog loading: the packaged CSV/TOML files and user overlays, validated into a ``Catalog``.

Every file is checked against the schema (columns, required values, units, dates, duplicate
keys) and a bad row is one ``CatalogSchemaError`` naming the file, line and column. Overlays
(``--catalog DIR``, ``TRAINBILL_CATALOG``, the price cache) hold any of the same CSV files; their
rows win over packaged rows with the same key and date. Loading does no network I/O, ever.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trainbill._cache import cache_root, store_text
from trainbill._io import parse_toml, read_input_bytes, read_input_text
from trainbill.catalog._parse import _TABLE_COLUMNS, _catalog_error, _parse_date
from trainbill.catalog._readers import (
    _accelerators,
    _assumptions,
    _instances,
    _peaks,
    _prices,
    _spot,
)
from trainbill.catalog.lookups import Catalog
from trainbill.catalog.rows import (
    SCHEMA_VERSION,
    Accelerator,
    Assumption,
    Instance,
    PricePoint,
    SpotAdvisorRow,
)
from trainbill.errors import CatalogSchemaError

__all__ = ["file_sha256", "load_catalog", "packaged_data_dir"]


def packaged_data_dir() -> Path:
    """Directory of the packaged catalog data (inside the installed wheel)."""
    return Path(str(resources.files("trainbill.catalog") / "data"))


def _packaged_assumptions(data: Path) -> dict[str, Assumption]:
    """``assumptions.toml`` plus the fitted time-model parameters (``time.fit.*``).

    The fit lives in its own file because ``tools/fit_time_model.py`` rewrites it whole; only
    its ``[time.fit]`` table is read as assumptions (its ``[report]`` holds the residuals).

    The result is kept in the user's cache as JSON, keyed by a hash of both files' bytes and of
    this loader's source (``_assumptions_cache``): ``tomllib`` took ~8 ms of every command's
    start-up to read 53 KB that change only with a release; the JSON reads in ~0.3 ms. Any
    problem with the cache (missing, unreadable, stale, unwritable) just means parsing again.
    """
    main_path, fit = data / "assumptions.toml", data / "time_model_fit.toml"
    main_text = read_input_text(main_path, kind="catalog", error=_catalog_error)
    fit_text = read_input_text(fit, kind="catalog", error=_catalog_error) if fit.exists() else None
    cache = _assumptions_cache(main_text, fit_text)
    found = _read_cached_assumptions(cache)
    if found is not None:
        return found
    out = _assumptions(main_path, text=main_text)
    if fit_text is not None:
        fitted = _assumptions(fit, only="time", text=fit_text)
        clash = set(fitted) & set(out)
        if clash:
            msg = f"{fit}: keys {', '.join(sorted(clash))} also in assumptions.toml"
            raise CatalogSchemaError(msg)
        out.update(fitted)
    _write_cached_assumptions(cache, out)
    return out


def _assumptions_cache(main_text: str, fit_text: str | None) -> Path:
    """The cache file for these two files' contents and this loader (the key changes with any
    byte of either, or of ``loading.py`` and ``rows.py``, which shape what is built)."""
    h = hashlib.blake2b(digest_size=16)
    for part in (main_text, fit_text or ""):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    for code in (Path(__file__), Path(__file__).parent / "rows.py"):
        h.update(read_input_bytes(code, kind="catalog", error=_catalog_error))
    return cache_root("catalog") / f"assumptions-{h.hexdigest()}.json"


def _read_cached_assumptions(path: Path) -> dict[str, Assumption] | None:
    try:
        text = read_input_text(path, kind="catalog", error=_catalog_error)
        doc = json.loads(text, object_hook=_json_date)
        return {
            key: Assumption(
                key=key, value=value, unit=unit, source=source, as_of=date.fromisoformat(as_of)
            )
            for key, (value, unit, source, as_of) in doc.items()
        }
    except (OSError, ValueError, TypeError, AttributeError, CatalogSchemaError):
        return None


def _write_cached_assumptions(path: Path, found: Mapping[str, Assumption]) -> None:
    """Store the assumptions as JSON (``_cache.store_text``: atomic, failures ignored)."""
    doc = {a.key: [a.value, a.unit, a.source, a.as_of.isoformat()] for a in found.values()}
    try:
        text = json.dumps(doc, default=_date_json)
    except TypeError:  # a value JSON cannot hold: no cache, parse every time
        return
    store_text(path, text)


def _date_json(value: Any) -> Any:
    if isinstance(value, date) and not isinstance(value, datetime):
        return {"__date__": value.isoformat()}
    msg = f"not JSON: {type(value).__name__}"
    raise TypeError(msg)


def _json_date(obj: dict[str, Any]) -> Any:
    return date.fromisoformat(obj["__date__"]) if set(obj) == {"__date__"} else obj


def _manifest(data_dir: Path) -> tuple[str, date]:
    manifest = data_dir / "MANIFEST.toml"
    text = read_input_text(manifest, kind="catalog", error=_catalog_error)
    doc = parse_toml(text, source=str(manifest), error=_catalog_error)
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
    return hashlib.sha256(read_input_bytes(path, kind="catalog", error=_catalog_error)).hexdigest()


def _merge_prices(base: Iterable[PricePoint], over: Iterable[PricePoint]) -> tuple[PricePoint, ...]:
    merged = {(p.provider, p.region, p.item, p.option, p.effective_from): p for p in base}
    for p in over:
        merged[(p.provider, p.region, p.item, p.option, p.effective_from)] = p
    return tuple(merged.values())


def _overlay_schema(directory: Path) -> None:
    marker = directory / "SCHEMA_VERSION"
    if os.path.lexists(marker):
        text = read_input_text(marker, kind="catalog", error=_catalog_error).strip()
        if text != str(SCHEMA_VERSION):
            msg = (
                f"{marker}: catalog overlay has schema version {text!r}, expected "
                f"{SCHEMA_VERSION}. To fix: re-run 'trainbill prices update' or fix the overlay."
            )
            raise CatalogSchemaError(msg)


def _service_units(base: Catalog) -> dict[str, frozenset[str]]:
    """Units of the packaged service items (everything priced that is not an instance)."""
    units: dict[str, set[str]] = {}
    for p in base.prices:
        if p.item not in base.instances:
            units.setdefault(p.item, set()).add(p.unit)
    return {item: frozenset(u) for item, u in units.items()}


def _spot_buckets(base: Catalog) -> list[str] | None:
    """The Spot Advisor interruption buckets the reliability model has a rate for."""
    bucket_map = base.assumptions.get("reliability.spot_bucket_monthly_rate")
    if bucket_map is not None and isinstance(bucket_map.value, Mapping):
        return sorted(bucket_map.value)
    return None


def _overlay_directory(raw: Path | str) -> Path:
    """An overlay directory holding only catalog files this version reads, else an error."""
    directory = Path(raw)
    if not directory.is_dir():
        msg = (
            f"catalog overlay {directory} is not a directory (from --catalog or TRAINBILL_CATALOG)"
        )
        raise CatalogSchemaError(msg)
    _overlay_schema(directory)
    known = set(_TABLE_COLUMNS)
    try:
        present = {p.name for p in directory.iterdir() if p.suffix.lower() in {".csv", ".toml"}}
    except OSError as exc:
        msg = (
            f"catalog overlay {directory}: cannot list it "
            f"({exc.strerror or exc.__class__.__name__})"
        )
        raise CatalogSchemaError(msg) from None
    unknown = present - known
    if unknown:
        msg = (
            f"{directory}: unknown catalog file(s) {', '.join(sorted(unknown))}; an overlay is "
            f"read only from {', '.join(sorted(known))} (assumptions cannot be overlaid), so "
            "these would be ignored"
        )
        raise CatalogSchemaError(msg)
    return directory


@dataclass(kw_only=True)
class _Merged:
    """The packaged tables as overlays are applied to them, one directory after another."""

    accels: dict[str, Accelerator]
    insts: dict[str, Instance]
    prices: tuple[PricePoint, ...]
    spot: list[SpotAdvisorRow]
    today: date
    service_units: dict[str, frozenset[str]]
    buckets: list[str] | None

    def apply(self, directory: Path) -> None:
        """Rows of the directory's files win over earlier rows with the same key (and date)."""
        if os.path.lexists(directory / "accelerators.csv"):
            found = _accelerators(directory / "accelerators.csv", self.today)
            self.accels.update({a.id: a for a in found})
        if os.path.lexists(directory / "accelerator_peaks.csv"):
            self.accels = _peaks(directory / "accelerator_peaks.csv", self.accels, self.today)
        if os.path.lexists(directory / "instances.csv"):
            found_insts = _instances(directory / "instances.csv", self.today)
            self.insts.update({i.instance: i for i in found_insts})
        if os.path.lexists(directory / "prices.csv"):
            over = _prices(directory / "prices.csv", self.today, self.insts, self.service_units)
            self.prices = _merge_prices(self.prices, over)
        if os.path.lexists(directory / "spot_advisor.csv"):
            self.spot.extend(_spot(directory / "spot_advisor.csv", self.today, self.buckets))


def load_catalog(overlays: Sequence[Path | str] = ()) -> Catalog:
    """Load the packaged catalog and apply overlay directories in order (later wins).

    Raises ``CatalogSchemaError`` naming the file, line and column of any bad row.
    """
    if not overlays:
        return _packaged()
    base = _packaged()
    merged = _Merged(
        accels=dict(base.accelerators),
        insts=dict(base.instances),
        prices=base.prices,
        spot=list(base.spot_advisor),
        today=datetime.now(UTC).date(),
        service_units=_service_units(base),
        buckets=_spot_buckets(base),
    )
    names = []
    for raw in overlays:
        directory = _overlay_directory(raw)
        merged.apply(directory)
        names.append(str(directory))
    _check_references(merged.accels, merged.insts)
    return Catalog(
        accelerators=MappingProxyType(merged.accels),
        instances=MappingProxyType(merged.insts),
        prices=merged.prices,
        spot_advisor=tuple(merged.spot),
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
    accels = _peaks(data / "accelerator_peaks.csv", accels)
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
