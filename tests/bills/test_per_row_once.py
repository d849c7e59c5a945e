"""Per-row values that several expressions reuse are computed once (``_engine._computed_once``).

Why it matters: Ibis merges consecutive projections, inlining a value into every expression
that reads it, and DuckDB does not share repeats under a ``CASE``; a legacy CUR CSV's money
conversion ran about three times a row (README, *Legacy CUR*). These tests pin the structure
of the SQL, and that staging changes no result.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_MONTH, FOCUS_SAMPLE, staged_queries

ibis = pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import cur, focus
from trainbill.bills._engine import _collect, _computed_once


def _scan_sql(path: Path) -> str:
    """The DuckDB SQL of the grouped-rows scan of ``path`` (the statement that reads files)."""
    queries = staged_queries(path)
    (scan,) = [q for name, q in queries.items() if name.startswith("scan:")]
    return str(ibis.to_sql(scan, dialect="duckdb"))


@pytest.mark.parametrize(
    ("path", "mapping"), [(CUR_MONTH, cur), (FOCUS_SAMPLE, focus)], ids=["cur-csv", "focus-csv"]
)
def test_each_text_money_column_is_parsed_once_per_row(path: Path, mapping: object) -> None:
    """One fast decimal parse per money column in the whole scan (the CUR fixture has 5 of
    the 8: unblended, 3 Savings Plan columns, public on-demand, no reservation columns; FOCUS:
    BilledCost, EffectiveCost, ListCost = 3), and no per-row FLOOR: text is summed as a
    decimal, not rounded per row."""
    sql = _scan_sql(path)
    with path.open(newline="", encoding="utf-8") as fh:
        header = {c.lower() for c in next(csv.reader(fh))}
    money = mapping.MONEY_COLUMNS.values()  # type: ignore[attr-defined]
    present = [c for c in money if c.lower() in header]
    assert len(present) == (5 if mapping is cur else 3)
    assert sql.count("AS DECIMAL(18, 12))") == len(present)
    assert "FLOOR(" not in sql


def test_reused_value_moves_to_an_earlier_projection() -> None:
    """``v`` read by two expressions is computed in a CTE, and both read its column; with
    nothing marked, the query is the plain ``mutate``."""
    t = ibis.table({"a": "string"}, name="src")
    reused: list[object] = []
    once = _collect(reused)
    v = once(t.a.strip().try_cast("decimal(18, 12)"))
    row = {"value": v, "missing": v.isnull()}
    sql = str(ibis.to_sql(_computed_once(t, row, reused, name="rows"), dialect="duckdb"))
    assert sql.startswith('WITH "rows_0" AS')
    assert sql.count("TRY_CAST(") == 1
    plain = str(ibis.to_sql(_computed_once(t, row, [], name="rows"), dialect="duckdb"))
    assert plain == str(ibis.to_sql(t.mutate(**row), dialect="duckdb"))
    assert plain.count("TRY_CAST(") == 2  # what staging avoids: the value inlined twice


def test_nested_reuse_gets_one_level_per_depth() -> None:
    """A marked value built on another marked value is computed one projection later (two
    CTEs), each expression still once."""
    t = ibis.table({"a": "string"}, name="src")
    reused: list[object] = []
    once = _collect(reused)
    s = once(t.a.strip())
    v = once(s.try_cast("decimal(18, 12)"))
    row = {"value": v, "missing": v.isnull(), "present": s.notnull()}
    sql = str(ibis.to_sql(_computed_once(t, row, reused, name="rows"), dialect="duckdb"))
    assert '"rows_0" AS' in sql
    assert '"rows_1" AS' in sql
    assert sql.count("TRIM(") == 1
    assert sql.count("TRY_CAST(") == 1


def test_marking_the_same_expression_twice_stages_it_once() -> None:
    """``once`` keeps one entry per distinct expression (Ibis expressions compare by value)."""
    t = ibis.table({"a": "string"}, name="src")
    reused: list[object] = []
    once = _collect(reused)
    once(t.a.strip())
    once(t.a.strip())
    assert len(reused) == 1


def test_two_staged_tables_in_one_union_run() -> None:
    """Spark, Trino and Athena read CSV and Parquet files of one bill in one query (a union of
    the two groups): their CTEs must not share a name (DuckDB: "Duplicate CTE name"). Two
    padded values come back trimmed, one from each table."""
    duckdb = pytest.importorskip("duckdb")

    def staged(table: str) -> object:
        t = ibis.table({"a": "string"}, name=table)
        reused: list[object] = []
        v = _collect(reused)(t.a.strip())
        return _computed_once(t, {"v": v}, reused, name=f"trainbill_{table}_rows").select("v")

    union = ibis.union(staged("csv"), staged("parquet"), distinct=False)
    with duckdb.connect() as con:
        con.execute("CREATE TABLE csv AS SELECT ' x' AS a")
        con.execute("CREATE TABLE parquet AS SELECT 'y ' AS a")
        rows = con.execute(str(ibis.to_sql(union, dialect="duckdb"))).fetchall()
    assert sorted(rows) == [("x",), ("y",)]
