"""One reader per catalog file: accelerators (and their peak table), instances, prices,
Spot data and assumptions, each turning checked rows into the catalog's records.

``loading`` merges what these return (packaged data, then overlays) and caches it; a reader
knows only its own file's columns and rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from trainbill._io import parse_toml, read_input_text
from trainbill.catalog._parse import (
    _MAX_FUTURE_DAYS,
    PEAK_TABLE_PRECISIONS,
    _catalog_error,
    _no_duplicates,
    _parse_date,
    _parse_float,
    _parse_int,
    _read_table,
    _req,
)
from trainbill.catalog.rows import (
    OPTIONS,
    PROVIDERS,
    Accelerator,
    Assumption,
    Instance,
    PricePoint,
    SpotAdvisorRow,
    accelerator_key,
)
from trainbill.errors import CatalogSchemaError


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
