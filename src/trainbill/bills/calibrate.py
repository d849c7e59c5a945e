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
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trainbill._io import DestinationError, atomic_write_text, destination_problem
from trainbill._record import record
from trainbill.bills.reconcile import plan_provider
from trainbill.bills.summary import BillSummary
from trainbill.errors import BillError, finite_number, shown_value

#: The largest overhead factor a calibration file may hold, USD per GPU node-hour: a thousand
#: times the dearest GPU node-hour in the catalog (~$114, p5en and p5 on demand). Anything
#: above is a typo or a broken file, and priced it printed 300-digit bills.
MAX_FACTOR_USD_PER_NODE_HOUR = 1e5

__all__ = [
    "CALIBRATED_CATEGORIES",
    "SCHEMA_VERSION",
    "BillCalibration",
    "calibration_from_document",
    "calibration_to_toml",
    "check_output",
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


@record
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
    #: The clouds the bills are of (plan providers: aws, gcp, azure; a bill's other provider
    #: names as written). Overheads per node-hour of one cloud's services say nothing of
    #: another's, so a plan on a cloud not listed is refused (``trainbill.calibration``).
    #: Empty in files written before it was recorded: then nothing is checked.
    providers: tuple[str, ...] = ()


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
    other = currencies - {"USD"}
    if other:
        raise BillError(
            f"bills are in {', '.join(sorted(other))}; a calibration holds USD per GPU node-hour "
            "and forecasts are in USD, so only USD bills can calibrate"
        )
    hours = sum(s.gpu_instance_hours for s in summaries)
    if hours <= 0:
        files = ", ".join(f for s in summaries for f in s.files)
        raise BillError(
            f"{files}: no GPU instance-hours found (no usage rows of an AWS p*/g*/trn*/inf* "
            "instance or an Azure N-series VM; Google Cloud bills GPUs per GPU-hour and "
            "machines per vCPU-hour, which are not instance-hours); calibration divides "
            "overheads by GPU node-hours"
        )
    totals = {c: sum(s.by_category.get(c, 0.0) for s in summaries) for c in CALIBRATED_CATEGORIES}
    negative = {c: v for c, v in totals.items() if v < 0}
    if negative:
        shown = ", ".join(f"{c} {v:,.2f}" for c, v in negative.items())
        raise BillError(
            f"{', '.join(f for s in summaries for f in s.files)}: negative overhead total(s) "
            f"({shown} USD): refunds exceed charges in the period; add the bills the charges "
            "are on, since a negative cost per node-hour would lower every forecast"
        )
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
        providers=tuple(
            sorted({plan_provider(n) or n for s in summaries for n in s.by_provider if n})
        ),
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
        "providers": cal.providers or None,
    }
    lines = [
        "# trainbill calibration fitted from bills (see `trainbill calibrate`).",
        (
            "# `trainbill forecast --calibration FILE` scales overheads by these USD per GPU "
            "node-hour."
        ),
        "[calibration]",
    ]
    lines += [f"{k} = {_value(v)}" for k, v in head.items() if v is not None]
    lines += ["", "[calibration.factors_usd_per_node_hour]"]
    lines += [f"{k} = {_value(float(v))}" for k, v in cal.factors_usd_per_node_hour.items()]
    lines += ["", "[calibration.totals_usd]"]
    lines += [f"{k} = {_value(float(v))}" for k, v in cal.totals_usd.items()]
    return "\n".join(lines) + "\n"


def write_calibration(
    cal: BillCalibration, path: Path, *, overwrite: bool = False, inputs: Sequence[Path] = ()
) -> None:
    """Write atomically; without ``overwrite`` a file that appeared meanwhile is kept
    (``trainbill._io``: the check and the write are one step).

    Raises:
        BillError: ``path`` exists and ``overwrite`` is false (it may hold an earlier
            calibration the user wants), is one of the bills read, is not a regular file, or
            cannot be written.
    """
    text = calibration_to_toml(cal)
    check_output(path, overwrite=overwrite, inputs=inputs)
    try:
        atomic_write_text(path, text, replace=overwrite)
    except DestinationError as exc:
        raise BillError(str(exc)) from None
    except OSError as exc:
        raise BillError(f"{path}: cannot write: {exc.strerror or exc}") from None


def check_output(path: Path, *, overwrite: bool, inputs: Sequence[Path] = ()) -> None:
    """Refuse an output path before any work (``trainbill._io.destination_problem``): a
    folder, a parent that is a file, a non-regular file, one of the bills being read, or an
    existing file without ``overwrite``.

    Raises:
        BillError: naming the path and what to do instead.
    """
    if path.is_dir():
        raise BillError(
            f"{path}: is a folder; give the calibration file's path, e.g. "
            f"{path / 'calibration.toml'}"
        )
    problem = destination_problem(path, replace=overwrite, inputs=inputs)
    if problem is not None:
        raise BillError(problem)


def _num(
    section: Mapping[str, Any],
    key: str,
    source: str,
    table: str = "calibration",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    why_maximum: str = "",
) -> float:
    value = section.get(key)
    x = finite_number(value)
    if x is None:
        raise BillError(
            f"{source}: {table}.{key}: must be a finite number, got {shown_value(value)}"
        )
    if minimum is not None and x < minimum:
        raise BillError(f"{source}: {table}.{key}: must be >= {minimum:g}, got {value!r}")
    if maximum is not None and x > maximum:
        raise BillError(
            f"{source}: {table}.{key}: must be <= {maximum:,.0f} ({why_maximum}), got {value!r}"
        )
    return x


def _period(cal: Mapping[str, Any], key: str, source: str) -> date | None:
    value = cal.get(key)
    if value is None:
        return None
    if isinstance(value, datetime) or not isinstance(value, date):
        raise BillError(
            f"{source}: calibration.{key}: must be a TOML date like 2026-04-01, got {value!r}"
        )
    return value


def _load_toml(path: Path) -> dict[str, Any]:
    """The file parsed as TOML, or a one-line error naming it."""
    from trainbill._io import parse_toml, read_input_text

    def error(message: str, source: str) -> BillError:
        return BillError(f"{source}: {message}")

    text = read_input_text(path, kind="calibration", what="calibration file", error=error)
    return parse_toml(text, source=str(path), error=error)


def _calibration_table(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The ``[calibration]`` table, checked to be a bills calibration of this schema version."""
    cal = data.get("calibration")
    if not isinstance(cal, dict) or cal.get("kind") != "bills":
        raise BillError(f'{source}: calibration.kind: expected "bills" in a [calibration] table')
    version = cal.get("schema_version")
    if version != SCHEMA_VERSION:
        newer = (
            "; the file was written by a newer trainbill: upgrade trainbill or re-run "
            "`trainbill calibrate`"
            if isinstance(version, int)
            and not isinstance(version, bool)
            and version > SCHEMA_VERSION
            else ""
        )
        raise BillError(
            f"{source}: calibration.schema_version: expected {SCHEMA_VERSION}, "
            f"got {version!r}{newer}"
        )
    return cal


def _factors(cal: Mapping[str, Any], source: str) -> dict[str, Any]:
    factors = cal.get("factors_usd_per_node_hour")
    if not isinstance(factors, dict):
        raise BillError(f"{source}: calibration.factors_usd_per_node_hour: missing table")
    unknown = set(factors) - set(CALIBRATED_CATEGORIES)
    if unknown:
        raise BillError(
            f"{source}: calibration.factors_usd_per_node_hour: unknown {sorted(unknown)}; "
            f"allowed: {', '.join(CALIBRATED_CATEGORIES)}"
        )
    if not factors:
        raise BillError(
            f"{source}: calibration.factors_usd_per_node_hour: empty, so nothing to calibrate; "
            f"give at least one of {', '.join(CALIBRATED_CATEGORIES)} (trainbill calibrate "
            "writes them from a bill)"
        )
    return factors


def read_calibration(path: Path) -> BillCalibration:
    """Read and validate a bills calibration file.

    Raises:
        BillError: missing file, not TOML, wrong ``kind``/``schema_version``, or a bad field;
            the message names the file and the field.
    """
    return calibration_from_document(_load_toml(path), str(path))


def calibration_from_document(data: Mapping[str, Any], source: str) -> BillCalibration:
    """A bills calibration from its parsed TOML (a file's, or a web request's text);
    ``source`` names it in errors.

    Raises:
        BillError: wrong ``kind``/``schema_version`` or a bad field, naming source and field.
    """
    cal = _calibration_table(data, source)
    factors = _factors(cal, source)
    hours = _num(cal, "gpu_node_hours", source)
    if hours <= 0:
        raise BillError(f"{source}: calibration.gpu_node_hours: must be > 0, got {hours}")
    currency = cal.get("currency", "")
    if currency not in ("USD", ""):
        raise BillError(
            f"{source}: calibration.currency: {currency!r} is not supported; allowed: USD "
            "(forecasts are in USD)"
        )
    basis = cal.get("basis", "billed_cost")
    if basis != "billed_cost":
        raise BillError(f'{source}: calibration.basis: expected "billed_cost", got {basis!r}')
    start = _period(cal, "period_start", source)
    end = _period(cal, "period_end", source)
    if start is not None and end is not None and end <= start:
        raise BillError(
            f"{source}: calibration.period_end: {end} is not after period_start {start}"
        )
    totals = cal.get("totals_usd", {})
    if not isinstance(totals, dict):
        raise BillError(f"{source}: calibration.totals_usd: must be a table, got {totals!r}")
    files = cal.get("source_files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise BillError(
            f"{source}: calibration.source_files: must be a list of file names, got {files!r}"
        )
    providers = cal.get("providers", [])
    if not isinstance(providers, list) or not all(isinstance(x, str) for x in providers):
        raise BillError(
            f'{source}: calibration.providers: must be a list of cloud names like ["aws"], '
            f"got {shown_value(providers)}"
        )
    created = cal.get("created_at")
    if created is not None and not isinstance(created, datetime):
        raise BillError(
            f"{source}: calibration.created_at: must be a TOML date-time like "
            f"2026-05-02T10:00:00Z, got {shown_value(created)}"
        )
    factor_table = "calibration.factors_usd_per_node_hour"
    return BillCalibration(
        period_start=start,
        period_end=end,
        currency=str(currency),
        gpu_node_hours=hours,
        gpu_compute_usd=_num(cal, "gpu_compute_usd", source, minimum=0),
        factors_usd_per_node_hour=MappingProxyType(
            {
                k: _num(
                    factors,
                    k,
                    source,
                    factor_table,
                    minimum=0,
                    maximum=MAX_FACTOR_USD_PER_NODE_HOUR,
                    why_maximum="a thousand times the dearest GPU node-hour sold",
                )
                for k in factors
            }
        ),
        totals_usd=MappingProxyType(
            {k: _num(totals, k, source, "calibration.totals_usd") for k in totals}
        ),
        source_files=tuple(files),
        providers=tuple(providers),
        created_at=created if isinstance(created, datetime) else datetime.now(UTC),
    )
