"""Ibis expression helpers shared by the FOCUS and CUR mappings.

Every value is cleaned the same way on every engine: strings are trimmed and the placeholders
real exports use for "no value" (``NULL``, empty string; FOCUS sample README) become real nulls.

Money leaves each pre-aggregation group as whole **pico-units** (10^-12 of the currency), an
exact integer: integer sums are exact and independent of summation order, so DuckDB and Spark
agree to the last digit, and 12 places hold every decimal real exports write (CUR 10, FOCUS
11), so a total does not depend on how rows were grouped (``pico_total``). Why not coarser:
AWS bills price single rows below a micro-dollar (S3 requests at $4e-7). How a row gets
there depends on the column's physical type (``money``):

* DOUBLE is rounded per row to ``int64`` nano-units, ``floor(x * 10^9 + 0.5)`` (ties towards
  +infinity), identical on both engines bit for bit: a double is multiplied and shifted in
  IEEE arithmetic (the same on every engine) and ``floor`` is exact. The error is at most
  $5e-10 a row, so a bill needs 10 million rows before the worst case could reach a cent (and
  rounding errors of binary values cancel in practice). ``ROUND`` would be the obvious
  spelling, but engines round doubles differently (DuckDB the binary value, Spark its
  shortest decimal form) and DuckDB's ``ROUND`` is twice as slow as ``FLOOR``.
* DECIMAL is summed exactly in its own type and turned into pico-units once per group
  (``money_total``, ``pico_total``): exact for up to 12 decimal places, rounded half away from
  zero within $5e-13 a group beyond.
* Text is parsed as an exact ``decimal(38, 12)`` (so ``0.1`` is exactly 0.1) and summed like
  DECIMAL: the file's exact sum. Rounded to nano-units per row instead (before 2026-12-04),
  CUR's 10-decimal costs drifted: half-up on the 10th digit adds 0.05 nano-units a row on
  average, and the 128-bit rounding cost ~4x the bare scan of a CSV.

The largest row accepted is ±9 billion; larger values are flagged as bad, never wrapped.

A cost that is neither null nor a number sets a ``bad_*`` flag instead of silently becoming
null, so the reader can refuse the file and name the row.

Ibis objects are typed ``Any``: the expressions are built lazily after ``import ibis`` inside
functions, and ``import trainbill`` must not import ibis.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from trainbill.bills._files import MAX_AMOUNT, BillFormat

#: ``once(expr)`` marks a per-row expression that several others reuse, so that the engine
#: computes it in a projection of its own and the others read the result (``_engine.groups``).
Once = Callable[[Any], Any]


def as_is(expr: Any) -> Any:
    """The ``Once`` that marks nothing (each expression inlined where it is used)."""
    return expr


__all__ = [
    "MONEY",
    "NANO",
    "PICO",
    "WHOLE",
    "Once",
    "as_is",
    "as_nano",
    "day",
    "lower",
    "money",
    "money_total",
    "null_str",
    "pico_total",
    "quantity",
    "row_filter",
    "same_kind",
    "tag",
    "tag_from_json",
    "text",
]

#: Exact type text is parsed into; 12 decimal places covers the 11 used by real FOCUS exports.
MONEY = "decimal(38, 12)"
#: The same parse for the values a row holds in practice (``|x| < 10^6``): DuckDB parses text
#: into an int64-backed decimal ~15x faster than into a 128-bit one (2 M CUR rows, 7 columns:
#: 0.35 s against 5.9 s of CPU), and both round the digits past 12 alike (one parser).
_SHORT = "decimal(18, 12)"
#: DOUBLE money is rounded per row to integer units of 10^-9 (see the module docstring).
NANO = 10**9
#: Every group's money leaves the engine in integer units of 10^-12 (``pico_total``).
PICO = 10**12
#: Largest absolute amount a row may carry (int64 nano-units, with headroom).
_MAX_AMOUNT = int(MAX_AMOUNT)


def null_str() -> Any:
    """A typed string null."""
    import ibis

    return ibis.null("string")


def _clean(col: Any, *, per_row: bool = False) -> Any:
    """``col`` trimmed, with the "no value" placeholders as nulls.

    ``per_row`` (money and quantities, converted on every row): trimmed only where an end
    could be white space (a character up to the space: a superset of what ``strip`` removes,
    so the test can only call ``strip`` for nothing). DuckDB's trim of a character set costs
    ~4x the test and real values are almost never padded (2 M CUR rows, 7 columns: 2.1 s of
    CPU against 0.5 s; reading the CSV: 2.8 s). Keys are cleaned once per group, where the
    plain form is the shorter SQL to plan.
    """
    import ibis

    if not col.type().is_string():
        return col
    if per_row:
        padded = (col.substr(0, 1) <= " ") | (col.right(1) <= " ")
        s = ibis.cases((padded, col.strip()), else_=col)
    else:
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


def tag_from_json(tags: Any, key: str) -> Any:
    """Value of ``key`` in a JSON object held as a string (FOCUS ``Tags``, CUR CSV maps).

    A regular expression rather than a JSON function, because it compiles identically on
    DuckDB (RE2) and Spark (Java regex) and tags are flat string maps.
    """
    pattern = '"' + re.escape(key) + r'"\s*:\s*"([^"]*)"'
    return tags.re_extract(pattern, 1).nullif("")


def tag(t: Any, fmt: BillFormat, column: str, *keys: str) -> Any:
    """The first of ``keys`` that ``column``'s tags hold in a row (an empty value is none).

    One reader for every tag column, because exports write the same map two ways: a
    ``MAP(VARCHAR, VARCHAR)`` (AWS's FOCUS and CUR 2.0 Parquet) or JSON text (CSV, other
    providers). A map cast to text is not JSON (DuckDB prints ``{k=v}``), so a map read as
    text put every row of AWS's FOCUS Parquet in "(none)"; a map is looked up by key.
    """
    import ibis

    if not fmt.has(column):
        return null_str()
    col = t[fmt.col(column)]
    if col.type().is_map():
        found = [col.get(k).cast("string").nullif("") for k in keys]
    else:
        tags = text(t, fmt, column)
        found = [tag_from_json(tags, k) for k in keys]
    return found[0] if len(found) == 1 else ibis.coalesce(*found)


def row_filter(
    t: Any, fmt: BillFormat, where: Any, *, tag_of: Callable[[str], Any], day_column: str
) -> Any:
    """The Ibis predicate of a ``filters.BillFilter`` on raw rows: every tag pair equal (a
    row without the tag, or a file without tag columns, is out), the charge day within
    [since, until] as ``YYYY-MM-DD`` text; ``tag_of(key)`` is the format's tag reader."""
    import ibis

    conds = [tag_of(key) == value for key, value in where.tags]
    if where.since is not None or where.until is not None:
        d = day(t, fmt, day_column)
        if where.since is not None:
            conds.append(d >= where.since.isoformat())
        if where.until is not None:
            conds.append(d <= where.until.isoformat())
    out = ibis.literal(True)
    for c in conds:
        out = out & c.fill_null(False)
    return out


def lower(t: Any, fmt: BillFormat, column: str) -> Any:
    """Cleaned, lower-cased string (real exports vary case: ``Usage-Based``/``Usage-based``)."""
    return text(t, fmt, column).lower()


def money(t: Any, fmt: BillFormat, column: str, once: Once = as_is) -> tuple[Any, Any]:
    """(per-row value, 0/1 flag "present but not a number") for a money column.

    The per-row conversion is chosen by the column's physical type, and each value is
    converted once (the flag tests the raw value, not a second copy of the conversion):

    * ``DECIMAL(p, s)`` (the FOCUS type; what DuckDB and Spark write for decimal arithmetic):
      the value itself, untouched. It is already exact, so it is summed exactly in its own
      type and turned into whole pico-units once per group (``pico_total``). Converting every row
      instead (``decimal(38, 12)``, times 10^9, ``FLOOR``, cast) is 128-bit arithmetic that
      made a 5-million-row bill ~30x a bare scan; summing the decimal is about as cheap as
      summing a double. Only a type that can hold ±9e9 (``p - s >= 10``) is range-checked.
    * ``DOUBLE``: rounded to int64 nano-units per row (a double's binary value is not a
      decimal, so it is rounded where it is read, identically on every engine).
    * text (CSV, or a string-typed Parquet column): parsed as an exact ``decimal(38, 12)``
      (12 places, more than real exports write), else as a double, so ``1.5E-7`` (CUR CSVs
      use scientific notation) is accepted on both engines; then summed like a DECIMAL
      column. It used to be rounded to nano-units per row, which cost ~4x the bare scan of a
      CSV in 128-bit arithmetic and biased totals: CUR writes 10 decimals and rounding the
      10th half up adds +0.05 nano-units a row on average ($0.0001 on a 2 M-row bill).

    A value beyond ±9 billion is flagged too: no bill row is that large, and int64
    nano-units cannot hold it exactly.

    Text is the one costly conversion (trim, casts), and its "is it empty" and "bad value"
    flags test the converted value: the cleaned text and the value go through ``once``, or
    the engine would convert each row several times (DuckDB does not share repeats within a
    projection).
    """
    import ibis

    zero = ibis.literal(0, "int64")
    if not fmt.has(column):
        return ibis.null("int64"), zero
    col = t[fmt.col(column)]
    dtype = col.type()
    if dtype.is_decimal():
        precision = dtype.precision if dtype.precision is not None else 38
        scale = dtype.scale if dtype.scale is not None else 0
        if precision - scale <= 9:  # |value| < 10^9 by type: nothing to check
            return col, zero
        # The value itself is summed even when flagged (a 38-digit sum cannot overflow on
        # any bill): the flag makes the reader refuse the file anyway.
        return col, ibis.cases((col.abs() >= _MAX_AMOUNT, 1), else_=0).cast("int64")
    if dtype.is_numeric():
        # Integers and floats; ``abs < limit`` is false for NaN and ±inf on every engine, and
        # null (so not flagged) for a null. No ``notnull()`` test: Ibis compiles it for Spark
        # as "neither null nor NaN", so a NaN cost was counted as an empty one, 0.
        nano = _nano(col)
        bad = ibis.cases((~(col.abs() < _MAX_AMOUNT), 1), else_=0).cast("int64")
        return nano, bad
    s = once(_clean(col.cast("string") if not dtype.is_string() else col, per_row=True))
    # A double beyond the limit (``1e400`` is inf, ``NaN``) is refused *before* the cast to
    # decimal, which would otherwise abort the whole query with no row to name.
    f = s.try_cast("float64")
    as_float = ibis.cases((f.abs() < _MAX_AMOUNT, f.cast(MONEY)), else_=ibis.null(MONEY))
    # DuckDB reads ``1_000`` as 1000 (digit separators) where Spark and the error path do
    # not: a separator is refused on every engine, like ``1,000``.
    value = once(
        ibis.cases(
            (s.contains("_"), ibis.null(MONEY)),
            else_=ibis.coalesce(s.try_cast(_SHORT).cast(MONEY), s.try_cast(MONEY), as_float),
        )
    )
    # Summed even when flagged, like a DECIMAL beyond the range: the file is refused anyway.
    bad = ibis.cases(
        ((once(s.notnull()) & value.isnull()) | (value.abs() >= _MAX_AMOUNT), 1), else_=0
    ).cast("int64")
    return value, bad


def _nano(value: Any) -> Any:
    """Per-row int64 nano-units ``floor(x * 10^9 + 0.5)`` of a double or a ``MONEY`` decimal,
    null beyond ±9e9 (see the module docstring)."""
    import ibis

    return ibis.cases(
        (value.abs() < _MAX_AMOUNT, (value * NANO + 0.5).floor().cast("int64")),
        else_=ibis.null("int64"),
    )


def as_nano(value: Any) -> Any:
    """A ``money`` value as per-row int64 nano-units, whatever its kind.

    Needed only where one row's cost is computed from several columns of different physical
    types (CUR's effective cost from a DECIMAL and a DOUBLE column): nano-units and currency
    decimals must not be mixed in one expression. Slow (128-bit arithmetic per row), and rare:
    an export writes all its money columns with one type.
    """
    if not value.type().is_decimal():
        return value
    return _nano(value.cast(MONEY))


def same_kind(values: list[Any]) -> list[Any]:
    """``values`` unchanged when all are decimals or all nano-units, else all as nano-units."""
    import ibis.expr.operations as ops

    def absent(v: Any) -> bool:  # a column the files lack (a typed null): of either kind
        op = v.op()
        return isinstance(op, ops.Literal) and op.value is None

    present = [v for v in values if not absent(v)]
    if len({v.type().is_decimal() for v in present}) > 1:
        return [as_nano(v) for v in values]
    if present and present[0].type().is_decimal():
        return [v.cast(present[0].type()) if absent(v) else v for v in values]
    return values


#: Exact type a group's money sum leaves the engine in: whole nano-units (``money_total`` of
#: DOUBLE), then whole pico-units (``pico_total``).
WHOLE = "decimal(38, 0)"


def money_total(value: Any, *, wide_int_sum: bool) -> Any:
    """A group's exact sum of a ``money`` value, not yet in whole units (``pico_total``).

    Decimals are summed exactly in their own type (a 128-bit accumulator) and kept in currency
    units as ``decimal(38, s)``, with ``s >= 1`` (a whole-unit ``DECIMAL(p, 0)`` column, JPY say,
    is summed at scale 1) so that the scale tells the two kinds apart: int64 nano-units sum to
    scale 0 (``WHOLE``). They are summed as they are where the engine widens the sum to 128
    bits (``wide_int_sum``: DuckDB) and cast per row elsewhere: Spark, Trino and Athena sum
    ``bigint`` into ``bigint``, which could overflow.

    Why a separate rounding step: one row's effective cost can combine several columns (CUR's
    ``coalesce(sp_effective, unblended)``), and the combination is computed on these exact
    group sums (``cur.normalize``) so that each row's value is converted once, summed once, and
    the combined total rounded once.
    """
    import ibis

    dtype = value.type()
    if dtype.is_decimal():
        scale = max(dtype.scale if dtype.scale is not None else 0, 1)
        return value.sum().cast(ibis.dtype(f"decimal(38, {scale})"))
    if wide_int_sum:
        return value.sum().cast(WHOLE)
    # The outer cast is the engines' type already; Ibis would type the sum decimal(38, 2).
    return value.cast(WHOLE).sum().cast(WHOLE)


def pico_total(total: Any, like: Any = None) -> Any:
    """``total`` (a ``money_total`` or a combination of several of one kind) in whole
    pico-units (10^-12 of the currency) typed ``WHOLE``; ``like`` is a ``money_total`` of the
    same kind when ``total`` is a combination (its type then need not show the kind).

    Why pico and not the nano-units DOUBLE is rounded to per row: text and DECIMAL values
    carry up to 12 decimals (CUR writes 10, FOCUS 11), and at 10^-12 their sums stay exact,
    so a total does not depend on how the rows were grouped: a ``--by day`` breakdown adds up
    to the summary's total to the last digit, and the total is the file's exact sum. Rounded
    to nano-units per group instead, the FOCUS sample's 1,000 rows read $20.520226732 against
    an exact $20.52022672899 (and its day breakdown $20.520226753). Nano-unit sums are
    multiplied by 1,000. A decimal with more than 12 places is rounded half away from zero
    once per group by a cast to ``decimal(38, 12)``, which DuckDB, Spark and Trino round alike.
    """
    dtype = (total if like is None else like).type()
    if dtype.is_decimal() and dtype.scale:
        return (total.cast("decimal(38, 12)") * PICO).cast(WHOLE)
    return total.cast(WHOLE) * (PICO // NANO)


def quantity(t: Any, fmt: BillFormat, column: str, once: Once = as_is) -> tuple[Any, Any]:
    """(usage quantity as ``float64``, 0/1 flag "present but not a finite number").

    Quantities only feed GPU instance-hours, reported to 6 decimals; doubles are fast and,
    rounded at the end, identical on both engines. They are not money, and some (bytes,
    requests) exceed what nano-units could hold, so there is no ±9e9 limit; but text that is
    not a number (``abc``, ``1_000``) or is not finite (``NaN``, ``inf``, ``1e400``) is flagged,
    never silently taken as null: a GPU row's hours would vanish from the multiplier.
    Text goes through ``once`` as in ``money``.
    """
    import ibis

    zero = ibis.literal(0, "int64")
    if not fmt.has(column):
        return ibis.null("float64"), zero
    col = t[fmt.col(column)]
    # ``abs < 1e308`` is false for NaN and ±inf on every engine (NaN sorts above all numbers
    # in DuckDB and Spark and compares false in Trino), without ``isnan``/``is_infinite``,
    # whose names differ between dialects.
    if col.type().is_numeric():
        value = col.cast("float64")
        finite = ibis.cases((value.abs() < 1e308, value), else_=ibis.null("float64"))
        # Null for a null, so not flagged. Not ``notnull() & …``: for Spark Ibis compiles
        # ``notnull`` of a float as "neither null nor NaN", so a NaN passed as an empty value.
        bad = ibis.cases((~(value.abs() < 1e308), 1), else_=0).cast("int64")
        return finite, bad
    s = once(_clean(col.cast("string") if not col.type().is_string() else col, per_row=True))
    value = once(ibis.cases((s.contains("_"), ibis.null("float64")), else_=s.try_cast("float64")))
    finite = once(ibis.cases((value.abs() < 1e308, value), else_=ibis.null("float64")))
    bad = ibis.cases((once(s.notnull()) & finite.isnull(), 1), else_=0).cast("int64")
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
