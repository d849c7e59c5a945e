"""Learn overhead factors from past bills, and write/read them as a calibration TOML file.

A forecast prices storage, transfer, networking and monitoring from assumptions; a team's own
bills say what those actually cost *per GPU node-hour* on their setup. ``fit_calibration``
divides each overhead category's billed cost by the GPU instance-hours on the same bills;
``trainbill forecast --calibration FILE`` can then scale its overheads by the plan's node-hours.

Idle and stall shares are not recorded: a bill shows hours paid, not hours a GPU waited, so
they cannot be inferred from billing data alone (``trainbill profile`` measures them).

File format (schema 1)::

    # trainbill calibration fitted from bills (see `trainbill calibrate`).
    [calibration]
    kind = "bills"                          # required, constant
    schema_version = 1                      # required
    created_at = 2026-05-02T10:00:00Z       # UTC
    period_start = 2026-04-01               # first billing period start over the bills
    period_end = 2026-05-01                 # last billing period end (exclusive)
    currency = "USD"
    basis = "billed_cost"                   # BilledCost (invoice), not amortised
    gpu_node_hours = 350.0                  # GPU instance-hours on the bills, > 0
    gpu_compute_usd = 13904.0               # what those hours cost (incl. SP/RI fees)
    source_files = ["bills/2026-04.csv.gz"]

    [calibration.factors_usd_per_node_hour] # category cost / gpu_node_hours
    storage = 1.0514
    data_transfer = 0.1971
    networking = 0.1594
    monitoring = 0.1143
    orchestration = 0.2057

    [calibration.totals_usd]                # the category totals the factors came from
    storage = 368.0
    ...
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trainbill._io import atomic_write_text
from trainbill.bills.summary import BillSummary
from trainbill.errors import BillError

__all__ = [
    "CALIBRATED_CATEGORIES",
    "SCHEMA_VERSION",
    "BillCalibration",
    "calibration_to_toml",
    "fit_calibration",
    "read_calibration",
    "write_calibration",
]

SCHEMA_VERSION = 1
#: Overhead categories a bill calibration fits, per GPU node-hour.
CALIBRATED_CATEGORIES: tuple[str, ...] = (
    "storage",
    "data_transfer",
    "networking",
    "monitoring",
    "orchestration",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BillCalibration:
    """Overhead cost per GPU node-hour, learned from bills covering ``period_start..period_end``."""

    period_start: date | None
    period_end: date | None
    currency: str
    gpu_node_hours: float
    gpu_compute_usd: float
    factors_usd_per_node_hour: Mapping[str, float]
    totals_usd: Mapping[str, float]
    source_files: tuple[str, ...]
    created_at: datetime
    basis: str = "billed_cost"


def _date(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


def fit_calibration(
    summaries: Sequence[BillSummary], *, now: datetime | None = None
) -> BillCalibration:
    """Fit per-node-hour overhead factors over one or more bills (summed, then divided).

    Raises:
        BillError: no bills, bills in different currencies, or no GPU instance-hours to
            divide by (a bill without GPU instances cannot calibrate a GPU forecast).
    """
    if not summaries:
        raise BillError("calibrate needs at least one bill")
    currencies = {s.currency for s in summaries if s.currency}
    if len(currencies) > 1:
        raise BillError(
            f"bills are in different currencies ({', '.join(sorted(currencies))}); "
            "calibrate each currency separately"
        )
    hours = sum(s.gpu_instance_hours for s in summaries)
    if hours <= 0:
        files = ", ".join(f for s in summaries for f in s.files)
        raise BillError(
            f"{files}: no GPU instance-hours found (no p*/g*/trn*/inf* instance usage rows); "
            "calibration divides overheads by GPU node-hours"
        )
    totals = {c: sum(s.by_category.get(c, 0.0) for s in summaries) for c in CALIBRATED_CATEGORIES}
    starts = [s.period_start for s in summaries if s.period_start]
    ends = [s.period_end for s in summaries if s.period_end]
    return BillCalibration(
        period_start=_date(min(starts)) if starts else None,
        period_end=_date(max(ends)) if ends else None,
        currency=currencies.pop() if currencies else "",
        gpu_node_hours=hours,
        gpu_compute_usd=sum(s.gpu_compute_cost for s in summaries),
        factors_usd_per_node_hour=MappingProxyType({c: v / hours for c, v in totals.items()}),
        totals_usd=MappingProxyType(totals),
        source_files=tuple(f for s in summaries for f in s.files),
        created_at=(now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0),
    )


def _value(value: object) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BillError(f"calibration value must be finite, got {value!r}")
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise BillError(f"cannot write {type(value).__name__} to TOML")


def calibration_to_toml(cal: BillCalibration) -> str:
    """Serialise as TOML (dates without a period are left out: TOML has no null)."""
    head: dict[str, object] = {
        "kind": "bills",
        "schema_version": SCHEMA_VERSION,
        "created_at": cal.created_at,
        "period_start": cal.period_start,
        "period_end": cal.period_end,
        "currency": cal.currency,
        "basis": cal.basis,
        "gpu_node_hours": float(cal.gpu_node_hours),
        "gpu_compute_usd": float(cal.gpu_compute_usd),
        "source_files": cal.source_files,
    }
    lines = [
        "# trainbill calibration fitted from bills (see `trainbill calibrate`).",
        "# `trainbill forecast --calibration FILE` scales overheads by these USD per GPU node-hour.",
        "[calibration]",
    ]
    lines += [f"{k} = {_value(v)}" for k, v in head.items() if v is not None]
    lines += ["", "[calibration.factors_usd_per_node_hour]"]
    lines += [f"{k} = {_value(float(v))}" for k, v in cal.factors_usd_per_node_hour.items()]
    lines += ["", "[calibration.totals_usd]"]
    lines += [f"{k} = {_value(float(v))}" for k, v in cal.totals_usd.items()]
    return "\n".join(lines) + "\n"


def write_calibration(cal: BillCalibration, path: Path, *, overwrite: bool = False) -> None:
    """Write atomically (temp file in the same folder, then ``os.replace``).

    Raises:
        BillError: ``path`` exists and ``overwrite`` is false (it may hold an earlier
            calibration the user wants), or the file cannot be written.
    """
    text = calibration_to_toml(cal)
    if path.exists() and not overwrite:
        raise BillError(f"{path}: already exists; choose another path or pass --force")
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise BillError(f"{path}: cannot write: {exc.strerror}") from None


def _num(section: Mapping[str, Any], key: str, source: str) -> float:
    value = section.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BillError(f"{source}: {key}: must be a finite number, got {value!r}")
    return float(value)


def read_calibration(path: Path) -> BillCalibration:
    """Read and validate a bills calibration file.

    Raises:
        BillError: missing file, not TOML, wrong ``kind``/``schema_version``, or a bad field;
            the message names the file and the field.
    """
    source = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BillError(f"{source}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BillError(f"{source}: not valid TOML: {exc}") from None
    cal = data.get("calibration")
    if not isinstance(cal, dict) or cal.get("kind") != "bills":
        raise BillError(f"{source}: calibration.kind: expected \"bills\" in a [calibration] table")
    if cal.get("schema_version") != SCHEMA_VERSION:
        raise BillError(
            f"{source}: calibration.schema_version: expected {SCHEMA_VERSION}, "
            f"got {cal.get('schema_version')!r}"
        )
    factors = cal.get("factors_usd_per_node_hour")
    if not isinstance(factors, dict):
        raise BillError(f"{source}: calibration.factors_usd_per_node_hour: missing table")
    unknown = set(factors) - set(CALIBRATED_CATEGORIES)
    if unknown:
        raise BillError(
            f"{source}: calibration.factors_usd_per_node_hour: unknown {sorted(unknown)}; "
            f"allowed: {', '.join(CALIBRATED_CATEGORIES)}"
        )
    hours = _num(cal, "gpu_node_hours", source)
    if hours <= 0:
        raise BillError(f"{source}: gpu_node_hours: must be > 0, got {hours}")
    totals = cal.get("totals_usd", {})
    created = cal.get("created_at")
    return BillCalibration(
        period_start=cal.get("period_start"),
        period_end=cal.get("period_end"),
        currency=str(cal.get("currency", "")),
        gpu_node_hours=hours,
        gpu_compute_usd=_num(cal, "gpu_compute_usd", source),
        factors_usd_per_node_hour=MappingProxyType(
            {k: _num(factors, k, source) for k in factors}
        ),
        totals_usd=MappingProxyType({k: _num(totals, k, source) for k in totals}),
        source_files=tuple(str(f) for f in cal.get("source_files", [])),
        created_at=created if isinstance(created, datetime) else datetime.now(UTC),
    )
