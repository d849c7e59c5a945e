"""Ibis expression helpers shared by the FOCUS and CUR mappings.

Every value is cleaned the same way on every engine: strings are trimmed and the placeholders
real exports use for "no value" (``NULL``, empty string; FOCUS sample README) become real nulls.

Money is carried as whole **nano-units** (10^-9 of the currency) in ``int64``, rounded once per
row: integer sums are exact and independent of summation order, so DuckDB and Spark agree to the
last digit, and they are 2-3x cheaper than summing ``decimal(38, 12)`` (128-bit) values, which
dominated the scan of a 5-million-row bill. Why nano and not micro: AWS bills price single rows
below a micro-dollar (S3 requests at $4e-7), which micro-units would round to zero; at nano
scale the rounding error is at most $5e-10 a row, so a bill needs 10 million rows before the
worst case could reach a cent (and rounding errors cancel in practice). The largest row
representable is about 9.2 billion; larger values are flagged as bad, never wrapped.

Rounding is ``floor(x * 10^9 + 0.5)`` (ties towards +infinity), identical on both engines bit
for bit: text is parsed as an exact decimal first (so ``0.1`` is exactly 100000000 nano-units)
and the arithmetic stays decimal; a double is multiplied and shifted in IEEE arithmetic (the same
on every engine) and ``floor`` is exact. ``ROUND`` would be the obvious spelling, but engines
round doubles differently (DuckDB the binary value, Spark its shortest decimal form) and DuckDB's
``ROUND`` is twice as slow as ``FLOOR`` on the 5-million-row benchmark.

A cost that is neither null nor a number sets a ``bad_*`` flag instead of silently becoming
null, so the reader can refuse the file and name the row.

Ibis objects are typed ``Any``: the expressions are built lazily after ``import ibis`` inside
functions, and ``import trainbill`` must not import ibis.
"""

from __future__ import annotations

from typing import Any

from trainbill.bills._files import MAX_AMOUNT, BillFormat

__all__ = ["MONEY", "NANO", "day", "lower", "money", "null_str", "quantity", "text"]

#: Exact type text is parsed into; 12 decimal places covers the 11 used by real FOCUS exports.
MONEY = "decimal(38, 12)"
#: Money is summed as integer units of 10^-9 (see the module docstring).
NANO = 10**9
#: Largest absolute amount a row may carry (int64 nano-units, with headroom).
_MAX_AMOUNT = int(MAX_AMOUNT)


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
    """(value in int64 nano-units, 0/1 flag "present but not a number") for a money column.

    Strings are tried as a decimal first, then as a double, so ``1.5E-7`` (CUR CSVs use
    scientific notation) is accepted on both engines. A value beyond ±9 billion is flagged too:
    it cannot be held exactly, and no bill row is that large.
    """
    import ibis

    zero = ibis.literal(0, "int64")
    if not fmt.has(column):
        return ibis.null("int64"), zero
    col = t[fmt.col(column)]
    if col.type().is_numeric():
        value = col if col.type().is_floating() else col.cast(MONEY)
        present = col.notnull()
    else:
        s = _clean(col.cast("string") if not col.type().is_string() else col)
        # A double beyond the limit (``1e400`` is inf, ``NaN``) is refused *before* the cast to
        # decimal, which would otherwise abort the whole query with no row to name.
        f = s.try_cast("float64")
        as_float = ibis.cases((f.abs() < _MAX_AMOUNT, f.cast(MONEY)), else_=ibis.null(MONEY))
        # DuckDB reads ``1_000`` as 1000 (digit separators) where Spark and the error path do
        # not: a separator is refused on every engine, like ``1,000``.
        value = ibis.cases(
            (s.contains("_"), ibis.null(MONEY)),
            else_=ibis.coalesce(s.try_cast(MONEY), as_float),
        )
        present = s.notnull()
    nano = ibis.cases(
        (value.abs() < _MAX_AMOUNT, (value * NANO + 0.5).floor().cast("int64")),
        else_=ibis.null("int64"),
    )
    bad = ibis.cases((present & nano.isnull(), 1), else_=0).cast("int64")
    return nano, bad


def quantity(t: Any, fmt: BillFormat, column: str) -> tuple[Any, Any]:
    """(usage quantity as ``float64``, 0/1 flag "present but not a finite number").

    Quantities only feed GPU instance-hours, reported to 6 decimals; doubles are fast and,
    rounded at the end, identical on both engines. They are not money, and some (bytes,
    requests) exceed what nano-units could hold, so there is no ±9e9 limit; but text that is
    not a number (``abc``, ``1_000``) or is not finite (``NaN``, ``inf``, ``1e400``) is flagged,
    never silently taken as null: a GPU row's hours would vanish from the multiplier.
    """
    import ibis

    zero = ibis.literal(0, "int64")
    if not fmt.has(column):
        return ibis.null("float64"), zero
    col = t[fmt.col(column)]
    if col.type().is_numeric():
        value = col.cast("float64")
        present = col.notnull()
    else:
        s = _clean(col.cast("string") if not col.type().is_string() else col)
        value = ibis.cases((s.contains("_"), ibis.null("float64")), else_=s.try_cast("float64"))
        present = s.notnull()
    # ``abs < 1e308`` is false for NaN and ±inf on every engine (NaN sorts above all numbers
    # in DuckDB and Spark and compares false in Trino), without ``isnan``/``is_infinite``,
    # whose names differ between dialects.
    finite = ibis.cases((value.abs() < 1e308, value), else_=ibis.null("float64"))
    bad = ibis.cases((present & finite.isnull(), 1), else_=0).cast("int64")
    return finite, bad


def day(t: Any, fmt: BillFormat, column: str) -> Any:
    """``YYYY-MM-DD`` of a timestamp column, whatever its spelling.

    Handles ISO ``2024-09-01T00:00:00Z``, CUR's ``2026-04-01T00:00:00.000Z``, the FOCUS sample's
    ``2024-09-18 22:00:00``, typed Parquet timestamps and dates, by taking the date part.
    """
    if not fmt.has(column):
        return null_str()
    col = t[fmt.col(column)]
    if col.type().is_date():  # a DATE is already the day (and has no ``.date()``)
        return col.cast("string")
    if col.type().is_timestamp():
        return col.date().cast("string")
    return _clean(col.cast("string") if not col.type().is_string() else col).substr(0, 10)
