"""Reading one catalog table: its header against the expected columns, each cell as a date,
an integer or a number in range, duplicate keys; every problem a ``CatalogSchemaError``
naming the file, line and column.

Shared by every per-file reader (``_readers``), so the packaged data and a user's overlay are
checked by the same rules.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping
from datetime import date
from pathlib import Path
from types import MappingProxyType

from trainbill._io import read_input_text
from trainbill.catalog.rows import SCHEMA_VERSION
from trainbill.errors import CatalogSchemaError

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
