"""Trino and Athena run the same Ibis queries as DuckDB and Spark.

No Trino or Athena server exists here, so the engine is exercised through its one seam, the Ibis
backend's ``table(name)``: a stand-in returns unbound tables with the schema an Athena/Trino
table over the export would have (every column a string, as the CSV SerDe declares them). The
expressions are compiled to each dialect, and the Trino SQL, translated to DuckDB's dialect by
sqlglot, is executed on the sample: it must give the same summary as the DuckDB engine, to the
cent. What this cannot show is a live server's behaviour; the README says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.bills.conftest import CUR_MONTH, FOCUS_SAMPLE

ibis = pytest.importorskip("ibis")
duckdb = pytest.importorskip("duckdb")
sqlglot = pytest.importorskip("sqlglot")

from trainbill.bills import read_bill
from trainbill.bills import summary as summary_mod
from trainbill.bills._engine import Engine
from trainbill.bills._files import detect
from trainbill.errors import BillError


def _source(path: Path, typed: bool) -> str:
    """DuckDB's reading of an export: every column a string (a CSV SerDe table) or typed."""
    return f"read_csv('{path}', header = true, all_varchar = {'false' if typed else 'true'})"


def _schema(path: Path, typed: bool) -> dict[str, Any]:
    """The schema a lake table over the export would declare."""
    from ibis.backends.sql.datatypes import DuckDBType

    with duckdb.connect() as con:
        rows = con.execute(f"DESCRIBE SELECT * FROM {_source(path, typed)}").fetchall()
    return {str(r[0]): DuckDBType.from_string(str(r[1])) for r in rows}


class _Lake:
    """Stands in for an Ibis Trino/Athena backend: named tables with known schemas."""

    def __init__(self, tables: dict[str, Path], typed: bool = False) -> None:
        self.tables = tables
        self.typed = typed

    def table(self, name: str, database: str | tuple[str, str] | None = None) -> Any:
        catalog, schema = database if isinstance(database, tuple) else (None, database)
        full = ".".join(x for x in (catalog, schema, name) if x)
        if full not in self.tables:
            raise LookupError(f"Table '{full}' does not exist")
        columns = _schema(self.tables[full], self.typed)
        return ibis.table(columns, name=name, database=schema, catalog=catalog)


def _expressions(engine: str, table: str, path: Path, typed: bool = False) -> tuple[Any, Any]:
    eng = Engine(engine, backend=_Lake({table: path}, typed))
    fmt = detect(eng.table_files([table]))
    return fmt, summary_mod._queries(eng, fmt, None, None)["summary"]


@pytest.mark.parametrize("engine", ["trino", "athena"])
@pytest.mark.parametrize(
    ("table", "path", "quoted"),
    [
        ("billing.focus", FOCUS_SAMPLE, '"billing"."focus"'),
        ("lake.billing.cur", CUR_MONTH, '"lake"."billing"."cur"'),
    ],
)
def test_queries_compile_to_the_engine_dialect(
    engine: str, table: str, path: Path, quoted: str
) -> None:
    """The summary query compiles for the engine and reads the named table."""
    fmt, expr = _expressions(engine, table, path)
    sql = str(ibis.to_sql(expr, dialect=engine))
    assert fmt.family == ("focus" if path == FOCUS_SAMPLE else "cur")
    assert f"FROM {quoted}" in sql
    assert "REGEXP_LIKE" in sql.upper()  # Trino/Athena spelling, not DuckDB's REGEXP_MATCHES
    assert "REGEXP_MATCHES" not in sql.upper()
    assert "DECIMAL(38, 0)" in sql.upper()  # money summed without bigint overflow


@pytest.mark.parametrize("typed", [False, True], ids=["string-columns", "typed-columns"])
@pytest.mark.parametrize(("table", "path"), [("focus_bill", FOCUS_SAMPLE), ("cur_bill", CUR_MONTH)])
def test_trino_sql_gives_the_duckdb_summary(
    table: str, path: Path, typed: bool, tmp_path: Path
) -> None:
    """The Trino SQL, translated to DuckDB by sqlglot and run on the sample, reproduces the
    DuckDB engine's summary exactly (totals, categories, purchase options, rows), whether the
    table declares every column a string (CSV SerDe) or typed (doubles, timestamps).

    The typed case is compared with the DuckDB engine reading the same typed data as Parquet:
    a cost parsed from text and the same cost stored as a double can round to different
    nano-units (the documented ≤ $5e-10 per row), so text and typed inputs are not compared.
    """
    fmt, expr = _expressions("trino", table, path, typed)
    trino_sql = str(ibis.to_sql(expr, dialect="trino"))
    duck_sql = sqlglot.transpile(trino_sql, read="trino", write="duckdb")[0]
    with duckdb.connect() as con:
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM {_source(path, typed)}")
        cur = con.execute(duck_sql)
        rows = summary_mod._rows([d[0] for d in cur.description], cur.fetchall())
    got = summary_mod._summarise(rows, fmt, "trino")
    if typed:
        parquet = tmp_path / f"{table}.parquet"
        with duckdb.connect() as con:
            con.execute(
                f"COPY (SELECT * FROM {_source(path, typed)}) TO '{parquet}' (FORMAT parquet)"
            )
        want = read_bill(parquet, engine="duckdb").as_dict()
    else:
        want = read_bill(path, engine="duckdb").as_dict()
    for key in ("format", "rows", "currency", "billed_cost", "effective_cost", "list_cost",
                "gpu_compute_cost", "period_start", "period_end"):  # fmt: skip
        assert got[key] == want[key], key
    assert got["uncategorized_rows"] == want["uncategorized"]["rows"]
    assert got["uncategorized_cost"] == want["uncategorized"]["cost"]
    assert dict(got["by_category"]) == want["by_category"]
    assert dict(got["compute_by_option"]) == want["compute_by_purchase_option"]
    assert want["billed_cost"] != 0  # the comparison is not between two empty bills


def test_missing_table_names_the_table() -> None:
    eng = Engine("trino", backend=_Lake({}))
    with pytest.raises(BillError, match=r"billing\.nope: trino cannot read the table"):
        eng.table_files(["billing.nope"])
    with pytest.raises(BillError, match=r"catalog\.schema\.table"):
        eng.table_files(["a.b.c.d"])


def test_tables_with_different_columns_are_refused() -> None:
    eng = Engine("athena", backend=_Lake({"a": FOCUS_SAMPLE, "b": CUR_MONTH}))
    files = eng.table_files(["a", "b"])
    with pytest.raises(BillError, match="have different columns"):
        eng._load_group(list(files))


@pytest.mark.parametrize(
    ("engine", "variable"),
    [("trino", "TRAINBILL_TRINO_URL"), ("athena", "TRAINBILL_ATHENA_S3_STAGING_DIR")],
)
def test_missing_connection_settings_are_a_clear_error(
    engine: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(BillError, match=variable):
        read_bill(["billing.focus"], engine=engine)


def test_cli_names_the_missing_setting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``trainbill bill summary TABLE --engine trino`` without a URL: one line, exit 1."""
    from trainbill.cli import main

    monkeypatch.delenv("TRAINBILL_TRINO_URL", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["bill", "summary", "billing.focus", "--engine", "trino"])
    err = capsys.readouterr().err
    assert exc.value.code == 1
    assert "trainbill: error: engine 'trino' needs TRAINBILL_TRINO_URL" in err
    assert "Traceback" not in err
