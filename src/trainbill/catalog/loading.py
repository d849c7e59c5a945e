"""Catalog loading: the packaged CSV/TOML files and user overlays, validated into a ``Catalog``.

Every file is checked against the schema (columns, required values, units, dates, duplicate
keys) and a bad row is one ``CatalogSchemaError`` naming the file, line and column. Overlays
(``--catalog DIR``, ``TRAINBILL_CATALOG``, the price cache) hold any of the same CSV files; their
rows win over packaged rows with the same key and date. Loading does no network I/O, ever.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trainbill._cache import cache_root, store_text
from trainbill._io import parse_toml, read_input_bytes, read_input_text
from trainbill.catalog.lookups import Catalog
from trainbill.catalog.rows import (
    OPTIONS,
    PROVIDERS,
    SCHEMA_VERSION,
    Accelerator,
    Assumption,
    Instance,
    PricePoint,
    SpotAdvisorRow,
    accelerator_key,
)
from trainbill.errors import CatalogSchemaError

__all__ = ["file_sha256", "load_catalog", "packaged_data_dir"]

_TABLE_COLUMNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "accelerators.csv": (
            "id", "name", "vendor", "peak_bf16_tflops", "peak_fp8_tflops", "hbm_gb",
            "hbm_tbps", "intra_node_gbytes_per_s", "tdp_w", "launched", "source", "as_of",
            "aliases",
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
        "accelerator_peaks.csv": ("accelerator", "precision", "peak_tflops", "source", "as_of"),
    }
)  # fmt: skip
#: Columns added after schema v1 was published, in the order they were added: a file written
#: before any of them (an overlay) is still read, with the columns it lacks blank.
_LATER_COLUMNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"accelerators.csv": ("launched", "aliases"), "instances.csv": ("launched",)}
)
#: Precisions ``accelerator_peaks.csv`` may list (bf16 and fp8 are columns of accelerators.csv).
PEAK_TABLE_PRECISIONS = ("fp16", "tf32", "fp32")
#: How far ahead of today an overlay price point may be dated (an announced price change or a
#: contract starting soon); later dates are typos that would silently never apply.
_MAX_FUTURE_DAYS = 366


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
        "accelerator_peaks.csv": ("accelerator", "precision"),
    }
)


def _header_problem(header: tuple[str, ...], expected: tuple[str, ...]) -> str:
    """What is wrong with a header that is neither the schema's nor its legacy form."""
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
    return (
        f"columns {list(header)} do not match schema v{SCHEMA_VERSION}:{detail} "
        f"expected {list(expected)}. To fix: regenerate the file or correct its header."
    )


def _catalog_error(message: str, source: str) -> CatalogSchemaError:
    """The input gate's error factory for catalog files (``trainbill._io.ErrorFactory``)."""
    return CatalogSchemaError(f"{source}: {message}")


def _missing_later(
    header: tuple[str, ...], expected: tuple[str, ...], later: tuple[str, ...]
) -> tuple[str, ...] | None:
    """The later columns a header written before them lacks (``()`` for the current header);
    ``None`` when the header is no form the schema ever had."""
    for k in range(len(later) + 1):
        missing = later[len(later) - k :]
        if header == tuple(c for c in expected if c not in missing):
            return missing
    return None


def _parse_rows(
    path: Path,
) -> tuple[tuple[str, ...], tuple[str, ...], list[tuple[int, dict[str, str]]]]:
    """(header, the later columns it was written without, rows with line numbers); unreadable
    files and headers that match no form the schema had are one error naming the file."""
    name = path.name
    expected = _TABLE_COLUMNS[name]
    later = _LATER_COLUMNS.get(name, ())
    text = read_input_text(path, kind="catalog", what="catalog file", error=_catalog_error)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = tuple(h.strip() for h in reader.fieldnames or ())
        if not header:
            msg = f"{path}: empty file; expected a header line {','.join(expected)}"
            raise CatalogSchemaError(msg)
        missing = _missing_later(header, expected, later)
        if missing is None:
            raise CatalogSchemaError(f"{path}: {_header_problem(header, expected)}")
        reader.fieldnames = list(header)
        rows = []
        for row in reader:
            if missing:
                row.update(dict.fromkeys(missing, ""))
            rows.append((reader.line_num, row))
    except csv.Error as exc:
        msg = f"{path}: not a readable CSV file ({exc})"
        raise CatalogSchemaError(msg) from None
    return header, missing, rows


def _check_row(
    path: Path, i: int, row: dict[str, str], header: tuple[str, ...], missing: tuple[str, ...]
) -> None:
    """Every field present, a source, and the table's required text columns not blank."""
    if None in row or any(v is None for v in row.values()):
        # Count against the file's own header: one written before a later column has fewer.
        msg = (
            f"{path}, line {i}: wrong number of fields (expected {len(header)}: {','.join(header)})"
        )
        if missing and None in row:
            expected = _TABLE_COLUMNS[path.name]
            msg += (
                f"; to give {', '.join(missing)}, add the column(s) to the header: "
                f"{','.join(expected)}"
            )
        raise CatalogSchemaError(msg)
    if not row.get("source", "").strip():
        msg = f"{path}, line {i}: every row needs a source"
        raise CatalogSchemaError(msg)
    for col in _REQUIRED_TEXT[path.name]:
        if not row[col].strip():
            msg = f"{path}, line {i}, {col}: value is required"
            raise CatalogSchemaError(msg)


def _read_table(path: Path) -> list[tuple[int, dict[str, str]]]:
    """Rows of a catalog CSV with their physical line numbers (a UTF-8 BOM is accepted)."""
    header, missing, rows = _parse_rows(path)
    for i, row in rows:
        _check_row(path, i, row, header, missing)
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
                # chip: it would silently make every run on the chip brand-new (maturity at its
                # lowest).
                launched=(
                    _parse_date(r["launched"], f"{w}, launched", latest=latest)
                    if r["launched"].strip()
                    else None
                ),
                source=r["source"],
                as_of=_parse_date(r["as_of"], f"{w}, as_of", latest=today),
                aliases=_aliases(r["aliases"], f"{w}, aliases"),
            )
        )
    return out


def _peaks(
    path: Path, accels: Mapping[str, Accelerator], today: date | None = None
) -> dict[str, Accelerator]:
    """``accels`` with each part's ``accelerator_peaks.csv`` rows attached (``Accelerator.peaks``).

    A long table (one row per part and precision) rather than more columns in
    ``accelerators.csv``: a part's FP32 or TF32 peak is added as a new dated row, never by
    editing the part's row, and a part with no public figure for a precision has no row.
    """
    rows = _read_table(path)
    keyed = ((i, (r["accelerator"].strip().lower(), r["precision"].strip())) for i, r in rows)
    _no_duplicates(path, keyed, "accelerator and precision")
    found: dict[str, list[tuple[str, float, str]]] = {}
    for i, r in rows:
        w = f"{path}, line {i}"
        acc = r["accelerator"].strip().lower()
        if acc not in accels:
            msg = f"{w}, accelerator: {acc!r} is not in accelerators.csv"
            raise CatalogSchemaError(msg)
        precision = _one_of(r, "precision", PEAK_TABLE_PRECISIONS, w)
        tflops = _req(_parse_float(r["peak_tflops"], f"{w}, peak_tflops", minimum=1e-9))
        _parse_date(r["as_of"], f"{w}, as_of", latest=today)
        found.setdefault(acc, []).append((precision, tflops, r["source"]))
    out = dict(accels)
    for acc, listed in found.items():
        kept = {p: (p, t, s) for p, t, s in accels[acc].peaks}
        kept.update({p: (p, t, s) for p, t, s in listed})
        out[acc] = replace(accels[acc], peaks=tuple(kept.values()))
    return out


def _aliases(text: str, where: str) -> tuple[str, ...]:
    """``a100;a100-sxm4-40gb`` as lookup keys; a blank entry (``a;;b``) is a typo."""
    if not text.strip():
        return ()
    names = [accelerator_key(n) for n in text.split(";")]
    if not all(names):
        msg = f"{where}: {text!r} has an empty name; separate names with one ';'"
        raise CatalogSchemaError(msg)
    return tuple(dict.fromkeys(names))


def _one_of(row: Mapping[str, str], field: str, allowed: Sequence[str], where: str) -> str:
    """The row's ``field``, stripped, if it is one of ``allowed``; else the one-line error."""
    value = row[field].strip()
    if value not in allowed:
        msg = f"{where}, {field}: {value!r} not one of {', '.join(allowed)}"
        raise CatalogSchemaError(msg)
    return value


def _instances(path: Path, today: date | None = None) -> list[Instance]:
    out = []
    rows = _read_table(path)
    _no_duplicates(path, ((i, (r["instance"].strip(),)) for i, r in rows), "instance")
    for i, r in rows:
        w = f"{path}, line {i}"
        provider = _one_of(r, "provider", PROVIDERS, w)
        billing = _one_of(r, "billing", ("instance", "chip"), w)
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
        option = _one_of(r, "option", OPTIONS, w)
        provider = _one_of(r, "provider", PROVIDERS, w)
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
            f"{where}, unit: {unit!r} is not the unit of {kind} {item!r}; allowed: "
            f"{', '.join(allowed)} (prices are USD per that unit; convert other currencies or "
            "periods first)"
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
        provider = _one_of(r, "provider", PROVIDERS, w)
        bucket = (
            r["interruption_bucket"].strip()
            if allowed is None
            else _one_of(r, "interruption_bucket", allowed, w)
        )
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


def _assumptions(
    path: Path, only: str | None = None, *, text: str | None = None
) -> dict[str, Assumption]:
    if text is None:
        text = read_input_text(path, kind="catalog", what="catalog file", error=_catalog_error)
    doc = parse_toml(text, source=str(path), error=_catalog_error)
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
