"""Careless input: every bad file, option or calibration is a one-line error naming the file,
column/field and row, never a traceback, a silently wrong number or an overwritten file.

Expected totals are from the CUR fixture by hand: 24 rows, BilledCost 14,197.04 USD; GPU
instance-hours 350 = 100 on-demand (row 1) + 50 spot (row 2) + 200 SP-covered (row 3).
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
from tests.bills.conftest import CUR_EXPORT, CUR_MONTH

from trainbill.errors import BillError, UnsupportedBillError

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from conftest import SEED, run_cli
from trainbill.bills import compare, fit_calibration, read_bill, read_calibration, write_calibration

TOTAL = 14197.04


def _rows() -> list[list[str]]:
    with CUR_MONTH.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def _edit(tmp_path: Path, row: int, column: str, value: str) -> Path:
    rows = _rows()
    rows[row][rows[0].index(column)] = value
    return _write(tmp_path / "bill.csv", rows)


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
    path = _edit(tmp_path, 7, "line_item_unblended_cost", value)
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
    path = _edit(tmp_path, 7, "line_item_unblended_cost", value)
    with pytest.raises(BillError, match=r"bill\.csv: row 7: column line_item_unblended_cost"):
        read_bill(path)


@pytest.mark.parametrize("value", ["abc", "NaN", "inf", "1e400"])
def test_bad_usage_amount_is_refused_not_dropped(tmp_path: Path, value: str) -> None:
    """A GPU row's hours silently vanished ('abc': 250 h) or became NaN ('nan instance-hours')."""
    path = _edit(tmp_path, 1, "line_item_usage_amount", value)
    with pytest.raises(
        BillError, match=r"bill\.csv: row 1: column line_item_usage_amount: .* is not a number"
    ):
        read_bill(path)


def test_negative_quantity_is_counted(tmp_path: Path) -> None:
    """Negative quantities are real (the FOCUS sample has 12): -100 h instead of 100 h."""
    s = read_bill(_edit(tmp_path, 1, "line_item_usage_amount", "-100"))
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
    """A Latin-1 byte in data row 3 was reported as 'cannot read the header'."""
    lines = CUR_MONTH.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b"Instance Hour", b"Instance H\xe9ur")
    path = tmp_path / "latin.csv"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(BillError, match=r"latin\.csv: .*Line: 4.*not utf-8") as err:
        read_bill(path)
    assert "header" not in str(err.value)


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
