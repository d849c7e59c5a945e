"""Which files a folder argument stands for (``trainbill.bills._files``)."""

from __future__ import annotations

import csv
import gzip
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_EXPORT, FOCUS_SAMPLE

pytest.importorskip("ibis")
pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from trainbill.bills import read_bill
from trainbill.errors import BillError

_PERIOD = "BILLING_PERIOD=2026-04"
_EXECUTION = "20260502T000000Z-7f3c"


def _csv_gz_totals(folder: Path) -> tuple[int, Decimal]:
    """Rows and Decimal sum of ``line_item_unblended_cost`` of every .csv.gz under ``folder``:
    the bill's totals computed without the reader."""
    rows, total = 0, Decimal(0)
    for part in sorted(folder.rglob("*.csv.gz")):
        with gzip.open(part, "rt", encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                rows += 1
                total += Decimal(row["line_item_unblended_cost"] or "0")
    return rows, total


def _export_with_unlisted_period(tmp_path: Path) -> Path:
    """The sample export (2026-04, with its manifest) plus a 2026-03 period holding the same
    two parts and no manifest (as when one month's ``metadata/`` was not downloaded)."""
    root = tmp_path / "export"
    shutil.copytree(CUR_EXPORT, root)
    data = root / "gpu-export" / "data"
    shutil.copytree(data / _PERIOD / _EXECUTION, data / "BILLING_PERIOD=2026-03" / "exec-1")
    return root


def test_period_without_manifest_is_read_not_dropped(tmp_path: Path) -> None:
    """Both periods are read: the manifest's two parts and the other period's two parts.
    Every part counted once, so the totals are the Decimal sums over all four files."""
    root = _export_with_unlisted_period(tmp_path)
    rows, total = _csv_gz_totals(root)
    assert rows == 48  # 24 rows per period (``test_cur``), two periods
    s = read_bill(root)
    assert len(s.files) == 4
    assert s.rows == rows
    assert s.billed_cost == pytest.approx(float(total), abs=1e-9)


def test_period_without_manifest_holding_two_versions_is_refused(tmp_path: Path) -> None:
    """The unlisted period has two execution folders: without a manifest naming the current
    one, summing both would count the month twice, so the read names the period and stops."""
    root = _export_with_unlisted_period(tmp_path)
    period = root / "gpu-export" / "data" / "BILLING_PERIOD=2026-03"
    shutil.copytree(period / "exec-1", period / "exec-2")
    with pytest.raises(BillError, match=r"BILLING_PERIOD=2026-03 holds 2 export versions"):
        read_bill(root)


def _focus_csv(path: Path, costs: dict[int, str]) -> Path:
    """The FOCUS sample with BilledCost replaced in the given data rows (counted from 1)."""
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("BilledCost")
    for row, cost in costs.items():
        rows[row][col] = cost
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def test_out_of_range_text_cost_names_the_offending_row(tmp_path: Path) -> None:
    """Row 1 holds 8,999,999,999.9999999999, inside ±9e9 (9e9 − 1e-10) but 9e9 as a double;
    row 3 holds 9,000,000,000.5, beyond it. The error names row 3."""
    path = _focus_csv(tmp_path / "bill.csv", {1: "8999999999.9999999999", 3: "9000000000.5"})
    with pytest.raises(
        BillError,
        match=r"bill\.csv: row 3: column BilledCost: '9000000000\.5' is beyond the exact ±9 "
        r"billion range \(1 such row",
    ):
        read_bill(path)


def test_text_cost_rounded_to_twelve_places_onto_the_limit_is_named(tmp_path: Path) -> None:
    """8,999,999,999.9999999999995 has 13 decimals; parsed at 12 places, half away from zero,
    it is 9,000,000,000.000000000000: at the limit, so refused, and named (row 2)."""
    path = _focus_csv(tmp_path / "bill.csv", {2: "8999999999.9999999999995"})
    with pytest.raises(BillError, match=r"bill\.csv: row 2: column BilledCost: .* beyond"):
        read_bill(path)


def test_out_of_range_decimal_cost_names_the_offending_row(tmp_path: Path) -> None:
    """DECIMAL(38, 10) costs 8,999,999,999.9999999999 (valid), 1, 9,000,000,000.0000000001
    (beyond ±9e9 by 1e-10): row 3 is named, not row 1."""
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:3]
    table = pa.table({k: [r[k] for r in rows] for k in rows[0]})
    costs = ["8999999999.9999999999", "1", "9000000000.0000000001"]
    money = pa.array([Decimal(c) for c in costs], pa.decimal128(38, 10))
    table = table.set_column(table.column_names.index("BilledCost"), "BilledCost", money)
    path = tmp_path / "bill.parquet"
    pq.write_table(table, path)
    with pytest.raises(
        BillError,
        match=r"bill\.parquet: row 3: column BilledCost: '9000000000\.0000000001' is beyond",
    ):
        read_bill(path)


def test_a_trailing_comma_on_every_line_is_an_unnamed_column(tmp_path: Path) -> None:
    """Spreadsheets save a trailing comma as a column with no name. It was refused with "it
    read 45 where the header(s) have 45"; it is a column no mapping reads. The FOCUS sample's
    exact total (REFERENCE: $20.52022672899) is unchanged."""
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as f:
        rows = [[*r, ""] for r in csv.reader(f)]
    path = tmp_path / "trailing.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    s = read_bill(path)
    assert s.rows == 1000
    assert Decimal(str(s.billed_cost)) == Decimal("20.52022672899")
