"""Bad input to the bill reader and the calibration: every refusal is one error naming the file,
the column or field and, where there is one, the row; never a traceback, a silently wrong number
or an overwritten file. Odd but valid files (negative quantities, CR line endings, a manifest
given directly) read like the fixture.
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_EXPORT, CUR_MONTH, FOCUS_SAMPLE

from trainbill.errors import BillError, UnsupportedBillError

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from conftest import SEED, run_cli
from trainbill.bills import compare, fit_calibration, read_bill, read_calibration, write_calibration

#: The CUR fixture by hand: 24 rows, BilledCost 14,197.04 USD; GPU instance-hours 350 = 100
#: on-demand (row 1) + 50 spot (row 2) + 200 SP-covered (row 3).
TOTAL = 14197.04


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
    """A legacy CUR file (``lineItem/UsageType``) without the columns a bill needs is named as
    legacy CUR, with what is missing under the CUR 2.0 names it is read by."""
    path = tmp_path / "legacy.csv"
    path.write_text(
        "identity/LineItemId,lineItem/UsageType,lineItem/UnblendedCost\na,b,1\n", encoding="utf-8"
    )
    with pytest.raises(
        UnsupportedBillError,
        match=r"looks like AWS legacy CUR .* lacks required column\(s\) line_item_line_item_type",
    ):
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


@pytest.mark.parametrize("cut", [0.5, 0.95])
def test_truncated_csv_gz_names_the_file_without_sql(tmp_path: Path, cut: float) -> None:
    """A .csv.gz cut short (a download stopped) is one line naming the file: DuckDB's error
    quoted its SQL (``LINE 1: CREATE OR REPLACE TEMP VIEW … read_csv(…``)."""
    path = tmp_path / "bill.csv.gz"
    data = gzip.compress(FOCUS_SAMPLE.read_bytes())
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(BillError) as err:
        read_bill(path)
    message = str(err.value)
    assert message.startswith(f"{path}: truncated or corrupt gzip (")
    assert "\n" not in message
    assert not any(sql in message for sql in ("LINE ", "read_csv", "SELECT"))


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


def _rows() -> list[list[str]]:
    with CUR_MONTH.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


@pytest.mark.parametrize(
    ("value", "wrong"),
    [
        ("NaN", "is not a number"),
        ("inf", "is not a number"),
        # numbers, only past ±9e9 (they were called "not a number" before issue #23)
        ("1e400", "is beyond the exact ±9 billion range"),
        ("1e30", "is beyond the exact ±9 billion range"),
        ("123456789012345678901234567890", "is beyond the exact ±9 billion range"),
    ],
)
def test_non_finite_or_huge_cost_names_row_and_column(
    tmp_path: Path, value: str, wrong: str
) -> None:
    """These aborted the DuckDB query ("Could not cast value nan to DECIMAL") with no row."""
    path = _edit_cur(tmp_path, 7, "line_item_unblended_cost", value)
    with pytest.raises(
        BillError, match=rf"bill\.csv: row 7: column line_item_unblended_cost: .* {wrong}"
    ):
        read_bill(path)


@pytest.mark.parametrize("value", ["1_000", "１２"])
def test_digit_separators_and_non_ascii_digits_are_refused_with_the_row(
    tmp_path: Path, value: str
) -> None:
    """DuckDB read '1_000' as 1000 (Spark would not); Python's float read '１２' as 12, so the
    error had no row."""
    path = _edit_cur(tmp_path, 7, "line_item_unblended_cost", value)
    with pytest.raises(BillError, match=r"bill\.csv: row 7: column line_item_unblended_cost"):
        read_bill(path)


@pytest.mark.parametrize("value", ["abc", "NaN", "inf", "1e400"])
def test_bad_usage_amount_is_refused_not_dropped(tmp_path: Path, value: str) -> None:
    """A GPU row's hours silently vanished ('abc': 250 h) or became NaN ('nan instance-hours')."""
    path = _edit_cur(tmp_path, 1, "line_item_usage_amount", value)
    with pytest.raises(
        BillError, match=r"bill\.csv: row 1: column line_item_usage_amount: .* is not a number"
    ):
        read_bill(path)


def test_negative_quantity_is_counted(tmp_path: Path) -> None:
    """Negative quantities are real (the FOCUS sample has 12): -100 h instead of 100 h."""
    s = read_bill(_edit_cur(tmp_path, 1, "line_item_usage_amount", "-100"))
    assert s.gpu_instance_hours == pytest.approx(350 - 200)
    assert s.billed_cost == pytest.approx(TOTAL)


@pytest.mark.parametrize("name", ["line_item_unblended_cost", "LINE_ITEM_UNBLENDED_COST"])
def test_duplicate_columns_are_refused(tmp_path: Path, name: str) -> None:
    """A second cost column (999 a row) was silently ignored; which one is the bill is a guess."""
    rows = [[*r, name if i == 0 else "999"] for i, r in enumerate(_rows())]
    with pytest.raises(
        UnsupportedBillError,
        match=r"column 24\) duplicates 'line_item_unblended_cost' \(column 14\)",
    ):
        read_bill(_write(tmp_path / "dup.csv", rows))


@pytest.mark.parametrize("cells", [25, 5])
def test_ragged_row_is_named(tmp_path: Path, cells: int) -> None:
    """A row with extra/missing cells made DuckDB sniff one column: an Ibis traceback."""
    rows = _rows()
    rows[5] = (rows[5] + ["x", "y"])[:cells]
    with pytest.raises(
        BillError, match=rf"ragged\.csv: row 5: {cells} cell\(s\) where the header has 23"
    ):
        read_bill(_write(tmp_path / "ragged.csv", rows))


def test_content_and_name_disagree(tmp_path: Path) -> None:
    """Parquet named .csv (was a UTF-8 codec error), gzip named .csv (DuckDB sniffing error),
    CSV named .csv.gz / .parquet."""
    import duckdb

    pq = tmp_path / "real.parquet"
    duckdb.sql(
        f"COPY (SELECT * FROM read_csv('{CUR_MONTH}', all_varchar=true)) TO '{pq}' (FORMAT parquet)"
    )
    cases = {
        "a.csv": (
            pq.read_bytes(),
            r"a\.csv: this is a Parquet file .* rename it to end in \.parquet",
        ),
        "b.csv": (
            gzip.compress(CUR_MONTH.read_bytes()),
            r"b\.csv: the file is gzip-compressed .* \.csv\.gz",
        ),
        "c.csv.gz": (CUR_MONTH.read_bytes(), r"c\.csv\.gz: the file is not gzip-compressed"),
        "d.parquet": (CUR_MONTH.read_bytes(), r"d\.parquet: the file is not Parquet"),
    }
    for name, (data, pattern) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(UnsupportedBillError, match=pattern):
            read_bill(path)
    assert read_bill(pq).billed_cost == pytest.approx(TOTAL)


def test_non_utf8_data_row_is_not_blamed_on_the_header(tmp_path: Path) -> None:
    """A Latin-1 byte in data row 3 was reported as 'cannot read the header', and then with the
    raw previous row quoted as the reason (DuckDB puts it on the line after "Original Line:")
    and the reason itself dropped."""
    lines = CUR_MONTH.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b"Instance Hour", b"Instance H\xe9ur")
    path = tmp_path / "latin.csv"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(BillError, match=r"latin\.csv: Line: 4: not UTF-8 text") as err:
        read_bill(path)
    assert "header" not in str(err.value)
    assert "AmazonEC2" not in str(err.value)


def test_semicolon_separated_is_named(tmp_path: Path) -> None:
    path = tmp_path / "semi.csv"
    path.write_text(CUR_MONTH.read_text(encoding="utf-8").replace(",", ";"), encoding="utf-8")
    with pytest.raises(
        UnsupportedBillError, match=r"semi\.csv: the header is separated by semicolons"
    ):
        read_bill(path)


def test_manifest_empty_and_given_directly(tmp_path: Path) -> None:
    """An empty dataFiles list was a KeyError traceback; a manifest file itself was refused."""
    export = tmp_path / "exp"
    shutil.copytree(CUR_EXPORT, export)
    manifest = next(export.rglob("*-Manifest.json"))
    assert read_bill(manifest).billed_cost == pytest.approx(TOTAL)
    manifest.write_text(json.dumps({"dataFiles": []}), encoding="utf-8")
    with pytest.raises(BillError, match=r"Manifest\.json: dataFiles is empty"):
        read_bill(export)
    manifest.write_text(json.dumps({"dataFiles": "abc"}), encoding="utf-8")
    with pytest.raises(BillError, match=r"Manifest\.json: dataFiles: expected a list"):
        read_bill(export)


def test_empty_tag_key_is_refused() -> None:
    with pytest.raises(BillError, match=r"--by 'tag: ': the tag key is empty"):
        read_bill(CUR_MONTH, by="tag: ")


def _calibration(tmp_path: Path, old: str, new: str) -> Path:
    cal = fit_calibration([read_bill(CUR_MONTH)], now=datetime(2026, 5, 2, tzinfo=UTC))
    path = tmp_path / "good.toml"
    write_calibration(cal, path)
    text = path.read_text(encoding="utf-8")
    assert old in text
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace(old, new, 1), encoding="utf-8")
    return bad


@pytest.mark.parametrize(
    ("old", "new", "pattern"),
    [
        ("storage = 1.05", "storage = -1.05", r"factors_usd_per_node_hour\.storage: must be >= 0"),
        (
            'currency = "USD"',
            'currency = "EUR"',
            r"calibration\.currency: 'EUR' is not supported; allowed: USD",
        ),
        (
            "schema_version = 1",
            "schema_version = 2",
            r"schema_version: expected 1, got 2; .*newer trainbill",
        ),
        (
            "period_start = 2026-04-01",
            'period_start = "yesterday"',
            r"calibration\.period_start: must be a TOML date",
        ),
        (
            "period_end = 2026-05-01",
            "period_end = 2026-03-01",
            r"calibration\.period_end: 2026-03-01 is not after",
        ),
        (
            "source_files = [",
            'source_files = "abc"\nx = [',
            r"calibration\.source_files: must be a list",
        ),
    ],
)
def test_bad_calibration_fields(tmp_path: Path, old: str, new: str, pattern: str) -> None:
    """Negative factors lowered the forecast; EUR factors were added as USD; a string period or
    source_files (split into letters) was accepted."""
    with pytest.raises(BillError, match=r"bad\.toml: .*" + pattern):
        read_calibration(_calibration(tmp_path, old, new))


def test_forecast_refuses_negative_calibration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = SEED
    bad = _calibration(tmp_path, "storage = 1.05", "storage = -1.05")
    code, _, err = run_cli(capsys, "forecast", str(plan), "--calibration", str(bad), "--json")
    assert code == 1
    assert err.count("\n") == 1
    assert "storage: must be >= 0" in err


def test_non_usd_bill_cannot_calibrate_or_compare(tmp_path: Path) -> None:
    rows = _rows()
    col = rows[0].index("line_item_currency_code")
    for r in rows[1:]:
        r[col] = "EUR"
    bill = read_bill(_write(tmp_path / "eur.csv", rows))
    assert bill.currency == "EUR"
    with pytest.raises(BillError, match="bills are in EUR"):
        fit_calibration([bill])
    with pytest.raises(BillError, match=r"eur\.csv: the bill is in EUR and the forecast in USD"):
        compare({"compute": 1.0}, bill)


def test_calibrate_output_mistakes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder was 'already exists' then, with --force, 'Is a directory'; a file as the parent
    was 'File exists'. An existing file is never touched."""
    folder = tmp_path / "out"
    folder.mkdir()
    code, _, err = run_cli(capsys, "calibrate", str(CUR_MONTH), "-o", str(folder), "--force")
    assert code == 1
    assert "is a folder" in err
    assert "Traceback" not in err
    keep = tmp_path / "keep.toml"
    keep.write_text("mine\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "calibrate", str(CUR_MONTH), "-o", str(keep / "c.toml"))
    assert code == 1
    assert "keep.toml is a file, not a folder" in err
    code, _, err = run_cli(capsys, "calibrate", str(CUR_MONTH), "-o", str(keep))
    assert code == 1
    assert "already exists" in err
    assert keep.read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.toml", "out"]  # no temp files


def test_write_calibration_does_not_clobber_a_file_that_appears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exists-check and the write are separate steps: a file created between them survives."""
    from trainbill.bills import calibrate

    cal = fit_calibration([read_bill(CUR_MONTH)])
    path = tmp_path / "c.toml"
    real_check = calibrate.check_output

    def check_then_race(p: Path, *, overwrite: bool, inputs: Sequence[Path] = ()) -> None:
        real_check(p, overwrite=overwrite, inputs=inputs)
        p.write_text("theirs\n", encoding="utf-8")

    monkeypatch.setattr(calibrate, "check_output", check_then_race)
    with pytest.raises(BillError, match="already exists"):
        write_calibration(cal, path)
    assert path.read_text(encoding="utf-8") == "theirs\n"
    assert [p.name for p in tmp_path.iterdir()] == ["c.toml"]


def test_cr_only_line_endings_read_like_lf(tmp_path: Path) -> None:
    """A CSV saved with classic-Mac CR line endings (header read raised _csv.Error) sums the
    same."""
    cr = tmp_path / "cr.csv"
    cr.write_bytes(CUR_MONTH.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r"))
    assert b"\n" not in cr.read_bytes()
    lf, mac = read_bill(CUR_MONTH), read_bill(cr)
    assert mac.rows == lf.rows
    assert mac.billed_cost == lf.billed_cost


def test_a_cost_with_a_no_break_space_names_its_row(tmp_path: Path) -> None:
    """'1.5' followed by a no-break space (U+00A0, as spreadsheets paste it) is refused by the
    query, which trims only spaces, tabs and newlines; the row finder trimmed every Unicode
    space, found nothing, and the error named no row."""
    lines = CUR_MONTH.read_text(encoding="utf-8").split("\n")
    lines[1] = lines[1].replace(",5504.00,", ",5504.00\u00a0,", 1)  # the p5 on-demand row
    assert "\u00a0" in lines[1]
    path = tmp_path / "nbsp.csv"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(BillError, match=r"nbsp\.csv: row 1: column line_item_unblended_cost"):
        read_bill(path)
