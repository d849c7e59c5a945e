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
    with pytest.raises(
        UnsupportedBillError,
        match=r"f\.csv: looks like FOCUS but lacks required column\(s\) BillingCurrency",
    ):
        read_bill(path)


def test_legacy_cur_is_named(tmp_path: Path) -> None:
    """Legacy CUR (``lineItem/UsageType``) gets a message pointing to CUR 2.0 / FOCUS."""
    path = tmp_path / "legacy.csv"
    path.write_text(
        "identity/LineItemId,lineItem/UsageType,lineItem/UnblendedCost\na,b,1\n", encoding="utf-8"
    )
    with pytest.raises(UnsupportedBillError, match="legacy CUR"):
        read_bill(path)


def test_non_numeric_cost_names_file_row_and_column(tmp_path: Path) -> None:
    """'12,x' is not a number: the error names the file, data row 7 and the cost column."""
    path = _edit_cur(tmp_path, 7, "line_item_unblended_cost", "80.0O")
    with pytest.raises(
        BillError,
        match=r"bill\.csv: row 7: column line_item_unblended_cost: '80\.0O' is not a number",
    ):
        read_bill(path)


def test_mixed_currencies(tmp_path: Path) -> None:
    """One EUR row among USD rows is refused, naming its row and both currencies."""
    path = _edit_cur(tmp_path, 10, "line_item_currency_code", "EUR")
    with pytest.raises(
        BillError, match=r"row 10: column line_item_currency_code: mixed currencies"
    ) as err:
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
    with pytest.raises(
        BillError, match="unknown engine 'oracle'; allowed: duckdb, spark, trino, athena"
    ):
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
    """A Parquet BilledCost of 1e10 (beyond ±9e9, the int64 nano-unit range) is refused at data
    row 2 as out of range (it used to be called "not a number")."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:3]
    table = pa.table({k: [r[k] for r in rows] for k in rows[0]})
    costs = pa.array([1.0, 1e10, 2.0])
    table = table.set_column(table.column_names.index("BilledCost"), "BilledCost", costs)
    path = tmp_path / "bill.parquet"
    pq.write_table(table, path)
    with pytest.raises(
        BillError,
        match=r"bill\.parquet: row 2: column BilledCost: '10000000000\.0' is beyond the exact ±9 "
        r"billion range",
    ):
        read_bill(path)


def test_cost_beyond_nine_billion_in_csv_is_out_of_range_not_nan(tmp_path: Path) -> None:
    """BilledCost 10000000000.5 is a number, only past ±9e9 (int64 nano-units hold ±9.22e18
    nano-USD = ±9.22e9 USD): the error says so instead of "not a number"; 9e9 - 0.5 still reads."""
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("BilledCost")
    rows[3][col] = "10000000000.5"
    path = tmp_path / "bill.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    with pytest.raises(BillError) as err:
        read_bill(path)
    text = str(err.value)
    assert (
        "bill.csv: row 3: column BilledCost: '10000000000.5' is beyond the exact ±9 billion range"
        in text
    )
    assert "not a number" not in text
    rows[3][col] = "8999999999.5"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    assert read_bill(path).rows == len(rows) - 1


def test_two_payer_accounts_are_shown_apart(tmp_path: Path) -> None:
    """Two CUR exports of different payer accounts in one folder are summed and each payer's
    part shown: the 24-row month (14,197.04) as payer 111… and again as payer 222…, whose
    first row (on-demand p5, 5,504.00) is relabelled 111…: 111… 14,197.04 + 5,504.00 =
    19,701.04, 222… 14,197.04 − 5,504.00 = 8,693.04, total 28,394.08."""
    folder = tmp_path / "exports"
    folder.mkdir()
    with CUR_MONTH.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = [*rows[0], "bill_payer_account_id"]
    for name, payer in (("a.csv", "111111111111"), ("b.csv", "222222222222")):
        body = [[*r, payer] for r in rows[1:]]
        body[0][-1] = "111111111111"
        with (folder / name).open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([header, *body])
    s = read_bill(folder)
    assert s.billed_cost == pytest.approx(28394.08, abs=1e-9)
    assert dict(s.by_payer) == pytest.approx(
        {"111111111111": 19701.04, "222222222222": 8693.04}, abs=1e-9
    )
    assert s.as_dict()["by_payer"] == dict(s.by_payer)


def test_folder_mixing_cur_and_focus_is_refused(tmp_path: Path) -> None:
    """A folder holding a CUR 2.0 and a FOCUS file: refused, naming each file's format."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "cur.csv").write_bytes(CUR_MONTH.read_bytes())
    (folder / "focus.csv").write_bytes(FOCUS_SAMPLE.read_bytes())
    with pytest.raises(
        UnsupportedBillError,
        match=r"cannot mix FOCUS and CUR 2\.0 files.*cur\.csv: cur.*focus\.csv: focus",
    ):
        read_bill(folder)


def _two_parquet_parts(folder: Path) -> list[Path]:
    """The CUR month as two Parquet files (rows 1-12, 13-24), all columns text."""
    import duckdb

    folder.mkdir()
    parts = [folder / "part-1.parquet", folder / "part-2.parquet"]
    with duckdb.connect() as con:
        for i, part in enumerate(parts):
            con.execute(
                f"COPY (SELECT * FROM read_csv('{CUR_MONTH}', all_varchar = true) "
                f"LIMIT 12 OFFSET {12 * i}) TO '{part}' (FORMAT parquet)"
            )
    return parts


def test_truncated_parquet_names_the_file(tmp_path: Path) -> None:
    """A Parquet part cut short (its footer lost) is refused, naming that part."""
    parts = _two_parquet_parts(tmp_path / "export")
    data = parts[1].read_bytes()
    parts[1].write_bytes(data[: len(data) // 2])
    with pytest.raises(BillError, match=r"part-2\.parquet"):
        read_bill(tmp_path / "export")


def test_file_vanishing_mid_read_names_it_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part deleted after its header was read (a sync tool replacing the export) makes the
    read fail naming that part; once it is back, the bill reads in full (24 rows, 14,197.04):
    the cache holds compiled SQL per schema, never data from a failed read."""
    from trainbill.bills import summary

    parts = _two_parquet_parts(tmp_path / "export")
    saved = parts[1].read_bytes()
    real_detect = summary.detect

    def detect_then_delete(files):  # type: ignore[no-untyped-def]
        fmt = real_detect(files)
        parts[1].unlink()
        return fmt

    monkeypatch.setattr(summary, "detect", detect_then_delete)
    with pytest.raises(BillError, match=r"part-2\.parquet"):
        read_bill(tmp_path / "export")
    monkeypatch.setattr(summary, "detect", real_detect)
    parts[1].write_bytes(saved)
    s = read_bill(tmp_path / "export")
    assert (s.rows, s.billed_cost) == (24, pytest.approx(14197.04, abs=1e-9))


def test_io_error_mid_read_names_only_that_part(tmp_path: Path) -> None:
    """DuckDB's error for a part cut short during the read (its text as DuckDB 2 words it)
    quotes that part: the message names it alone, not every file of the export."""
    import duckdb

    from trainbill.bills._files import detect, discover
    from trainbill.bills.summary import _duckdb_message

    parts = _two_parquet_parts(tmp_path / "export")
    fmt = detect(discover([tmp_path / "export"]))
    exc = duckdb.IOException(
        f'IO Error: Could not read enough bytes from file "{parts[1]}": attempted to read '
        "10145153 bytes from location 105806276"
    )
    message = _duckdb_message(exc, fmt)
    assert message.startswith(f"{parts[1]}: DuckDB could not read the bill: IO Error")
    assert str(parts[0]) not in message
