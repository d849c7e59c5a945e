"""Which files a folder argument stands for (``trainbill.bills._files``)."""

from __future__ import annotations

import csv
import gzip
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_EXPORT

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

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
