"""DuckDB and Spark run the same Ibis queries and must give identical results."""

from __future__ import annotations

import pytest
from tests.bills.conftest import CUR_EXPORT, CUR_MONTH, DATA, FOCUS_SAMPLE

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import read_bill

# py4j (PySpark's bridge to the JVM) leaves sockets for the garbage collector to close.
pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.mark.spark
@pytest.mark.usefixtures("spark_available")
@pytest.mark.parametrize(
    ("path", "by"),
    [
        (FOCUS_SAMPLE, "day"),
        (CUR_EXPORT, "tag:project"),
        (DATA / "cur_legacy_gpu_month.csv", "tag:project"),  # legacy CUR's own column names
    ],
)
def test_duckdb_and_spark_agree_exactly(path, by) -> None:  # type: ignore[no-untyped-def]
    """Every field of the summary, breakdown included, is identical on both engines."""
    duck = read_bill(path, engine="duckdb", by=by).as_dict()
    spark = read_bill(path, engine="spark", by=by).as_dict()
    assert (duck.pop("engine"), spark.pop("engine")) == ("duckdb", "spark")
    assert spark == duck


@pytest.mark.spark
@pytest.mark.usefixtures("spark_available")
@pytest.mark.parametrize("money_type", ["DECIMAL(38, 12)", "DECIMAL(18, 6)"])
def test_duckdb_and_spark_agree_on_typed_money(money_type: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The FOCUS sample (costs with up to 11 decimals) and the CUR month, money stored as
    DECIMAL Parquet: identical summaries on both engines, to the last digit; the
    CUR month keeps its hand-computed 14,197.04 (``test_cur``)."""
    import duckdb

    focus_money = ("BilledCost", "EffectiveCost", "ListCost")
    cur_money = (
        "line_item_unblended_cost",
        "savings_plan_savings_plan_effective_cost",
        "savings_plan_total_commitment_to_date",
        "savings_plan_used_commitment",
        "pricing_public_on_demand_cost",
    )
    for source, columns, name in (
        (FOCUS_SAMPLE, focus_money, "focus"),
        (CUR_MONTH, cur_money, "cur"),
    ):
        casts = ", ".join(f"TRY_CAST({c} AS {money_type}) AS {c}" for c in columns)
        out = tmp_path / f"{name}.parquet"
        with duckdb.connect() as con:
            con.execute(
                f"COPY (SELECT * REPLACE ({casts}) FROM read_csv('{source}', all_varchar = true)) "
                f"TO '{out}' (FORMAT parquet)"
            )
        duck = read_bill(out, engine="duckdb", by="service").as_dict()
        spark = read_bill(out, engine="spark", by="service").as_dict()
        duck.pop("engine"), spark.pop("engine")
        assert spark == duck
        if name == "cur":
            assert duck["billed_cost"] == pytest.approx(14197.04, abs=1e-9)


@pytest.mark.spark
@pytest.mark.usefixtures("spark_available")
def test_csv_and_text_parquet_in_one_folder_agree(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """One folder holding the FOCUS sample as CSV and again as Parquet whose every column is
    text: Spark reads both groups in one query (a union, each group's per-row values in CTEs of
    their own; one shared CTE name was a SQL error), and both engines give the same summary,
    twice the sample's 1,000 rows and exactly twice its billed total (20.52022672899 × 2)."""
    import shutil

    import duckdb

    shutil.copy(FOCUS_SAMPLE, tmp_path / "part-1.csv")
    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT * FROM read_csv('{FOCUS_SAMPLE}', all_varchar = true)) "
            f"TO '{tmp_path / 'part-2.parquet'}' (FORMAT parquet)"
        )
    duck = read_bill(tmp_path, engine="duckdb").as_dict()
    spark = read_bill(tmp_path, engine="spark").as_dict()
    duck.pop("engine"), spark.pop("engine")
    assert spark == duck
    assert duck["rows"] == 2000
    assert duck["billed_cost"] == 2 * 20.52022672899


@pytest.mark.spark
@pytest.mark.usefixtures("spark_available")
def test_a_malformed_csv_row_is_one_line_naming_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spark reads CSV with FAILFAST: a row of 2 cells under the sample's header fails the job.
    The reader says so in one line naming the file and Spark's root cause, not the JVM stack
    (dozens of lines) it used to raise."""
    from trainbill.errors import BillError

    bad = tmp_path / "bill.csv"
    lines = FOCUS_SAMPLE.read_text(encoding="utf-8").splitlines()[:5]
    bad.write_text("\n".join([*lines, '"x","y"']) + "\n", encoding="utf-8")
    with pytest.raises(BillError) as info:
        read_bill(bad, engine="spark")
    message = str(info.value)
    assert "\n" not in message
    assert str(bad) in message
    assert "MALFORMED_CSV_RECORD" in message


@pytest.mark.spark
@pytest.mark.usefixtures("spark_available")
def test_a_cost_column_whose_type_differs_between_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Was: Spark refused a folder whose March file has the unblended cost as DOUBLE and April's
    as text ("Failed to merge incompatible data types"), which DuckDB reads. The hand-summed
    month of test_cur (14,197.04) written twice, once per type: 28,394.08 on both engines."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    month = pacsv.read_csv(CUR_MONTH)
    assert month.schema.field("line_item_unblended_cost").type == pa.float64()
    cost = month.schema.get_field_index("line_item_unblended_cost")
    as_text = month.set_column(
        cost,
        "line_item_unblended_cost",
        pa.array([None if v is None else repr(v) for v in month.column(cost).to_pylist()]),
    )
    for name, table in (("2026-03", month), ("2026-04", as_text)):
        folder = tmp_path / f"BILLING_PERIOD={name}"
        folder.mkdir()
        pq.write_table(table, folder / "part-0.parquet", coerce_timestamps="us")
    duck = read_bill(tmp_path, engine="duckdb")
    spark = read_bill(tmp_path, engine="spark")
    assert duck.billed_cost == spark.billed_cost == pytest.approx(2 * 14197.04, abs=1e-9)
