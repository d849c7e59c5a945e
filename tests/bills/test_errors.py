"""Bad input: every refusal names the file, the column and, where there is one, the row."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_MONTH, FOCUS_SAMPLE

from trainbill.errors import BillError, UnsupportedBillError

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import read_bill


def _edit_cur(tmp_path: Path, row: int, column: str, value: str, name: str = "bill.csv") -> Path:
    """Copy the CUR fixture with one cell changed (``row`` counts data rows from 1)."""
    with CUR_MONTH.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[row][rows[0].index(column)] = value
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def test_unknown_format_lists_expected_columns(tmp_path: Path) -> None:
    """A CSV with neither FOCUS nor CUR columns is refused, naming both expected sets."""
    path = tmp_path / "x.csv"
    path.write_text("date,amount\n2024-01-01,3\n", encoding="utf-8")
    with pytest.raises(UnsupportedBillError, match=r"x\.csv: unknown bill format") as err:
        read_bill(path)
    assert "BilledCost" in str(err.value)
    assert "line_item_unblended_cost" in str(err.value)


def test_missing_required_column(tmp_path: Path) -> None:
    """A FOCUS file without BillingCurrency is refused, naming the missing column."""
    header = FOCUS_SAMPLE.read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "f.csv"
    path.write_text(header.replace('"BillingCurrency",', "") + "\n", encoding="utf-8")
    with pytest.raises(UnsupportedBillError, match=r"f\.csv: looks like FOCUS but lacks required column\(s\) BillingCurrency"):
        read_bill(path)


def test_legacy_cur_is_named(tmp_path: Path) -> None:
    """Legacy CUR (``lineItem/UsageType``) gets a message pointing to CUR 2.0 / FOCUS."""
    path = tmp_path / "legacy.csv"
    path.write_text("identity/LineItemId,lineItem/UsageType,lineItem/UnblendedCost\na,b,1\n", encoding="utf-8")
    with pytest.raises(UnsupportedBillError, match="legacy CUR"):
        read_bill(path)


def test_non_numeric_cost_names_file_row_and_column(tmp_path: Path) -> None:
    """'12,x' is not a number: the error names the file, data row 7 and the cost column."""
    path = _edit_cur(tmp_path, 7, "line_item_unblended_cost", "80.0O")
    with pytest.raises(BillError, match=r"bill\.csv: row 7: column line_item_unblended_cost: '80\.0O' is not a number"):
        read_bill(path)


def test_mixed_currencies(tmp_path: Path) -> None:
    """One EUR row among USD rows is refused, naming its row and both currencies."""
    path = _edit_cur(tmp_path, 10, "line_item_currency_code", "EUR")
    with pytest.raises(BillError, match=r"row 10: column line_item_currency_code: mixed currencies") as err:
        read_bill(path)
    assert "EUR (1 rows)" in str(err.value)
    assert "USD (23 rows)" in str(err.value)


def test_focus_and_cur_cannot_be_mixed() -> None:
    """Reading a FOCUS and a CUR file together is refused rather than guessed."""
    with pytest.raises(UnsupportedBillError, match=r"cannot mix FOCUS and CUR 2\.0"):
        read_bill([FOCUS_SAMPLE, CUR_MONTH])


def test_missing_path_and_bad_options(tmp_path: Path) -> None:
    """A missing file, an unknown engine and an unknown --by value each get a clear message."""
    with pytest.raises(BillError, match=r"nope\.csv: no such file or folder"):
        read_bill(tmp_path / "nope.csv")
    with pytest.raises(BillError, match="unknown engine 'oracle'; allowed: duckdb, spark, trino, athena"):
        read_bill(CUR_MONTH, engine="oracle")
    with pytest.raises(BillError, match="unknown engine 'presto'"):  # named before any file is read
        read_bill(tmp_path / "nope.csv", engine="presto")
    with pytest.raises(BillError, match="--by 'month' is not supported"):
        read_bill(CUR_MONTH, by="month")


def test_gzip_csv_is_read(tmp_path: Path) -> None:
    """A .csv.gz file is the same bill as the plain CSV (24 rows, 14,197.04)."""
    path = tmp_path / "bill.csv.gz"
    path.write_bytes(gzip.compress(CUR_MONTH.read_bytes()))
    s = read_bill(path)
    assert (s.rows, s.billed_cost) == (24, pytest.approx(14197.04, abs=1e-9))


def test_null_cost_strings_are_nulls_not_errors(tmp_path: Path) -> None:
    """'NULL' in a cost column is a null (FOCUS sample quirk), not a non-numeric value."""
    path = _edit_cur(tmp_path, 10, "pricing_public_on_demand_cost", "NULL")
    s = read_bill(path)
    assert s.rows == 24


def test_cost_beyond_nine_billion_in_parquet_names_row(tmp_path: Path) -> None:
    """A Parquet BilledCost of 1e10 (beyond ±9e9, the int64 nano-unit range) is refused at data row 2."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:3]
    table = pa.table({k: [r[k] for r in rows] for k in rows[0]})
    costs = pa.array([1.0, 1e10, 2.0])
    table = table.set_column(table.column_names.index("BilledCost"), "BilledCost", costs)
    path = tmp_path / "bill.parquet"
    pq.write_table(table, path)
    with pytest.raises(BillError, match=r"bill\.parquet: row 2: column BilledCost: '10000000000\.0' is not a number"):
        read_bill(path)
