"""``--where tag:KEY=VALUE``, ``--since``, ``--until``: the rows of one workload, read inside
the engine (``trainbill.bills.filters``), for FOCUS ``Tags``, CUR 2.0 ``resource_tags`` and
legacy CUR's ``resourceTags/user:`` columns, on DuckDB, Trino/Athena SQL and Spark alike."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_MONTH, DATA

from conftest import refused, run_cli

pytest.importorskip("ibis")

from trainbill.bills import read_bill
from trainbill.bills.filters import BillFilter, bill_filter
from trainbill.errors import BillError

LEGACY = DATA / "cur_legacy_gpu_month.csv"

#: (BilledCost, Tags, ChargePeriodStart day) of a small FOCUS bill.
_ROWS: list[tuple[str, dict[str, str], str]] = [
    ("100.10", {"trainbill-run": "run-1", "team": "nlp"}, "2026-04-02"),
    ("20.02", {"trainbill-run": "run-1"}, "2026-04-05"),
    ("3.003", {"trainbill-run": "run-2", "team": "nlp"}, "2026-04-02"),
    ("7.5", {}, "2026-04-02"),
    ("0.25", {"team": "nlp"}, "2026-04-09"),
]


def focus_csv(path: Path, rows: list[tuple[str, dict[str, str], str]] = _ROWS) -> Path:
    """A FOCUS CSV with the required columns, one EC2 usage row per ``rows`` entry."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow([
            "BilledCost", "EffectiveCost", "ListCost", "BillingCurrency", "ChargeCategory",
            "ServiceCategory", "ServiceName", "ChargePeriodStart", "BillingPeriodStart",
            "BillingPeriodEnd", "Tags",
        ])  # fmt: skip
        for cost, tags, day in rows:
            w.writerow([
                cost, cost, cost, "USD", "Usage", "Compute", "Amazon Elastic Compute Cloud",
                f"{day}T00:00:00Z", "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z",
                json.dumps(tags) if tags else "",
            ])  # fmt: skip
    return path


def test_tag_filter_keeps_only_the_tagged_rows(tmp_path: Path) -> None:
    """run-1's rows: 100.10 + 20.02 = 120.12 over 2 rows; run-2's and untagged rows are out."""
    s = read_bill(focus_csv(tmp_path / "f.csv"), where=bill_filter(["tag:trainbill-run=run-1"]))
    assert s.rows == 2
    assert s.billed_cost == pytest.approx(100.10 + 20.02, abs=1e-9)
    assert s.as_dict()["where"]["tags"] == [["trainbill-run", "run-1"]]


def test_tags_and_dates_combine(tmp_path: Path) -> None:
    """team=nlp on 2026-04-02 only: 100.10 + 3.003 = 103.103 (the 04-09 row is after --until)."""
    where = bill_filter(["tag:team=nlp"], since="2026-04-02", until="2026-04-02")
    s = read_bill(focus_csv(tmp_path / "f.csv"), where=where)
    assert (s.rows, s.billed_cost) == (2, pytest.approx(100.10 + 3.003, abs=1e-9))
    # Two tags must both match: run-1 and team=nlp is the first row alone.
    both = bill_filter(["tag:trainbill-run=run-1", "tag:team=nlp"])
    s = read_bill(focus_csv(tmp_path / "g.csv"), where=both)
    assert (s.rows, s.billed_cost) == (1, pytest.approx(100.10, abs=1e-9))


def test_dates_alone(tmp_path: Path) -> None:
    """--since 2026-04-05: 20.02 + 0.25 = 20.27 over 2 rows (inclusive day)."""
    s = read_bill(focus_csv(tmp_path / "f.csv"), where=bill_filter(since="2026-04-05"))
    assert (s.rows, s.billed_cost) == (2, pytest.approx(20.02 + 0.25, abs=1e-9))


def test_focus_map_tags(tmp_path: Path) -> None:
    """A Parquet ``MAP`` Tags column is filtered by key like JSON text."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    n = len(_ROWS)
    money = pa.array([Decimal(c) for c, _, _ in _ROWS], pa.decimal128(38, 10))
    table = pa.table({
        "BillingCurrency": ["USD"] * n, "ChargeCategory": ["Usage"] * n,
        "ServiceCategory": ["Compute"] * n, "ServiceName": ["Amazon EC2"] * n,
        "ChargePeriodStart": [f"{d}T00:00:00Z" for _, _, d in _ROWS],
        "BillingPeriodStart": ["2026-04-01T00:00:00Z"] * n,
        "BillingPeriodEnd": ["2026-05-01T00:00:00Z"] * n,
        "BilledCost": money, "EffectiveCost": money, "ListCost": money,
        "Tags": pa.array([list(t.items()) for _, t, _ in _ROWS], pa.map_(pa.string(), pa.string())),
    })  # fmt: skip
    pq.write_table(table, tmp_path / "f.parquet")
    s = read_bill(tmp_path / "f.parquet", where=bill_filter(["tag:trainbill-run=run-2"]))
    assert (s.rows, s.billed_cost) == (1, pytest.approx(3.003, abs=1e-12))


def _cur_expected(key: str, value: str) -> tuple[int, Decimal]:
    """Rows and unblended cost of the CUR 2.0 sample whose ``resource_tags`` hold ``user_KEY``,
    read with the csv module (the file has no net unblended column)."""
    rows, total = 0, Decimal(0)
    with CUR_MONTH.open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            tags = json.loads(r["resource_tags"]) if r["resource_tags"] else {}
            if tags.get(f"user_{key}") == value:
                rows += 1
                total += Decimal(r["line_item_unblended_cost"])
    return rows, total


def test_cur2_resource_tags() -> None:
    rows, total = _cur_expected("project", "llm")
    assert rows > 0
    s = read_bill(CUR_MONTH, where=bill_filter(["tag:project=llm"]))
    assert (s.rows, s.billed_cost) == (rows, pytest.approx(float(total), abs=1e-9))


def test_legacy_cur_tag_column() -> None:
    """``resourceTags/user:project`` = llm: p5 rows 5,504 + 1,200 + 11,008 − 11,008, EBS 80,
    FSx 174 = 6,958.00 over 6 rows (the breakdown test's arithmetic, test_cur_legacy.py)."""
    s = read_bill(LEGACY, where=bill_filter(["tag:project=llm"]))
    assert (s.rows, s.billed_cost) == (6, pytest.approx(5504 + 1200 + 80 + 174, abs=1e-9))


def test_trino_and_athena_sql_filter_like_duckdb(tmp_path: Path) -> None:
    """The filtered summary compiled for Trino (and Athena) holds the tag test, and the Trino
    SQL run on DuckDB (via sqlglot) gives DuckDB's filtered total."""
    import duckdb
    import ibis

    sqlglot = pytest.importorskip("sqlglot")
    from tests.bills.test_trino_athena import _Lake

    from trainbill.bills import summary as summary_mod
    from trainbill.bills._engine import Engine
    from trainbill.bills._files import detect

    path = focus_csv(tmp_path / "f.csv")
    where = bill_filter(["tag:trainbill-run=run-1"], since="2026-04-01")
    want = read_bill(path, where=where)
    for engine in ("trino", "athena"):
        eng = Engine(engine, backend=_Lake({"bill": path}))
        fmt = detect(eng.table_files(["bill"]))
        expr = summary_mod._queries(eng, fmt, None, None, where=where)["summary"]
        sql = str(ibis.to_sql(expr, dialect=engine))
        assert "trainbill" in sql
        assert "run-1" in sql
        assert "2026-04-01" in sql
    trino_sql = str(ibis.to_sql(expr, dialect="trino"))
    duck_sql = sqlglot.transpile(trino_sql, read="trino", write="duckdb")[0]
    with duckdb.connect() as con:
        con.execute(f"CREATE TABLE bill AS SELECT * FROM read_csv('{path}', all_varchar = true)")
        cur = con.execute(duck_sql)
        rows = summary_mod._rows([d[0] for d in cur.description], cur.fetchall())
    got = summary_mod._summarise(rows, fmt, "trino")
    assert (got["rows"], got["billed_cost"]) == (want.rows, want.billed_cost) == (2, 120.12)


@pytest.mark.spark
@pytest.mark.usefixtures("spark_available")
def test_spark_filters_like_duckdb(tmp_path: Path) -> None:
    path = focus_csv(tmp_path / "f.csv")
    where = bill_filter(["tag:team=nlp"], until="2026-04-02")
    s = read_bill(path, engine="spark", where=where)
    assert (s.rows, s.billed_cost) == (2, pytest.approx(100.10 + 3.003, abs=1e-9))


def test_cli_summary_and_compare_take_the_filters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import SEED

    path = str(focus_csv(tmp_path / "f.csv"))
    code, out, err = run_cli(
        capsys, "bill", "summary", path, "--where", "tag:trainbill-run=run-1", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["billed_cost"] == pytest.approx(120.12, abs=1e-9)
    code, out, err = run_cli(
        capsys, "bill", "compare", str(SEED), path, "--since", "2026-04-09", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["actual_total_usd"] == pytest.approx(0.25, abs=1e-9)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--where", "project=llm"], "tag:KEY=VALUE"),
        (["--where", "tag:project"], "give a tag key and a value"),
        (["--since", "April"], "--since 'April': not a date"),
        (["--since", "2026-05-01", "--until", "2026-04-01"], "after --until"),
    ],
)
def test_bad_filters_are_one_line(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(["bill", "summary", str(focus_csv(tmp_path / "f.csv")), *args], capsys, needle)


def test_filter_value_rules() -> None:
    assert BillFilter().empty
    assert bill_filter(["tag:a=1", "tag:a=1"]).tags == (("a", "1"),)
    with pytest.raises(BillError, match="given twice"):
        bill_filter(["tag:a=1", "tag:a=2"])
