"""Ibis expression helpers shared by the FOCUS and CUR mappings.

Every value is cleaned the same way on every engine: strings are trimmed and the placeholders
real exports use for "no value" (``NULL``, empty string; FOCUS sample README) become real nulls;
money is cast to ``decimal(38, 12)`` so sums are exact and DuckDB and Spark agree to the last
digit, not just to the cent. A cost that is neither null nor a number sets a ``bad_*`` flag
instead of silently becoming null, so the reader can refuse the file and name the row.

Ibis objects are typed ``Any``: the expressions are built lazily after ``import ibis`` inside
functions, and ``import trainbill`` must not import ibis.
"""

from __future__ import annotations

from typing import Any

from trainbill.bills._files import BillFormat

__all__ = ["MONEY", "day", "lower", "money", "null_str", "text"]

#: Exact money type; 12 decimal places covers the 11 used by real FOCUS exports.
MONEY = "decimal(38, 12)"


def null_str() -> Any:
    """A typed string null."""
    import ibis

    return ibis.null("string")


def _clean(col: Any) -> Any:
    import ibis

    if not col.type().is_string():
        return col
    s = col.strip()
    return ibis.cases((s.upper().isin(["NULL", ""]), ibis.null("string")), else_=s)


def text(t: Any, fmt: BillFormat, column: str) -> Any:
    """Cleaned string value of ``column``, or a null when the files lack it."""
    if not fmt.has(column):
        return null_str()
    col = t[fmt.col(column)]
    if not col.type().is_string():
        col = col.cast("string")
    return _clean(col)


def lower(t: Any, fmt: BillFormat, column: str) -> Any:
    """Cleaned, lower-cased string (real exports vary case: ``Usage-Based``/``Usage-based``)."""
    return text(t, fmt, column).lower()


def money(t: Any, fmt: BillFormat, column: str) -> tuple[Any, Any]:
    """(exact decimal value, 0/1 flag "present but not a number") for a numeric column.

    Strings are tried as a decimal first, then as a double, so ``1.5E-7`` (CUR CSVs use
    scientific notation) is accepted on both engines.
    """
    import ibis

    if not fmt.has(column):
        return ibis.null(MONEY), ibis.literal(0, "int64")
    col = t[fmt.col(column)]
    if col.type().is_numeric():
        return col.cast(MONEY), ibis.literal(0, "int64")
    s = _clean(col.cast("string") if not col.type().is_string() else col)
    value = ibis.coalesce(s.try_cast(MONEY), s.try_cast("float64").cast(MONEY))
    bad = ibis.cases((s.notnull() & value.isnull(), 1), else_=0).cast("int64")
    return value, bad


def day(t: Any, fmt: BillFormat, column: str) -> Any:
    """``YYYY-MM-DD`` of a timestamp column, whatever its spelling.

    Handles ISO ``2024-09-01T00:00:00Z``, CUR's ``2026-04-01T00:00:00.000Z``, the FOCUS sample's
    ``2024-09-18 22:00:00`` and typed Parquet timestamps, by taking the date part.
    """
    if not fmt.has(column):
        return null_str()
    col = t[fmt.col(column)]
    if col.type().is_timestamp() or col.type().is_date():
        return col.date().cast("string")
    return _clean(col.cast("string") if not col.type().is_string() else col).substr(0, 10)
