"""Legacy AWS CUR CSV (``lineItem/UnblendedCost`` columns): read by the CUR 2.0 code.

``tests/data/bills/cur_legacy_gpu_month.csv`` holds the same 24 rows as ``cur2_gpu_month.csv``
(their sums are worked out by hand in ``test_cur.py``'s docstring), written as a legacy report
writes them: ``identity/LineItemId`` and ``identity/TimeInterval`` first, ``category/Attribute``
headers (``pricing/publicOnDemandCost``, ``savingsPlan/SavingsPlanARN``), timestamps without
milliseconds, and one ``resourceTags/user:project`` column instead of CUR 2.0's tag map.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_MONTH, DATA
from tests.bills.test_cur import COMPUTE, TOTAL

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import read_bill
from trainbill.bills._files import canonical_column
from trainbill.errors import BillError, UnsupportedBillError

LEGACY = DATA / "cur_legacy_gpu_month.csv"


@pytest.mark.parametrize(
    ("legacy", "cur2"),
    [
        # AWS's own names for the same columns in CUR 2.0 (REFERENCE §2.1, table-dictionary-cur2)
        ("lineItem/UnblendedCost", "line_item_unblended_cost"),
        ("lineItem/LineItemType", "line_item_line_item_type"),
        ("bill/BillingPeriodStartDate", "bill_billing_period_start_date"),
        ("pricing/publicOnDemandCost", "pricing_public_on_demand_cost"),
        ("savingsPlan/SavingsPlanARN", "savings_plan_savings_plan_a_r_n"),
        (
            "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
            "reservation_unused_amortized_upfront_fee_for_billing_period",
        ),
        ("resourceTags/user:Team", "resource_tags_user_team"),
        ("BilledCost", "billedcost"),  # not legacy: only lower-cased
    ],
)
def test_canonical_column(legacy: str, cur2: str) -> None:
    assert canonical_column(legacy) == cur2


def test_legacy_month_by_hand() -> None:
    """The same figures as the CUR 2.0 month: total 14,197.04, compute 14,042.24, and the
    purchase options 5,642.24 / 1,200 / 7,200 (``test_cur.py``)."""
    s = read_bill(LEGACY)
    assert s.format == "cur-legacy"
    assert s.rows == 24
    assert s.billed_cost == pytest.approx(TOTAL, abs=1e-9)
    assert s.by_category["compute"] == pytest.approx(COMPUTE, abs=1e-9)
    assert dict(s.compute_by_option) == pytest.approx(
        {"on_demand": 5642.24, "spot": 1200.00, "committed": 7200.00}, abs=1e-9
    )
    cur2 = read_bill(CUR_MONTH)
    assert dict(s.by_category) == pytest.approx(dict(cur2.by_category), abs=1e-9)
    assert s.effective_cost == pytest.approx(cur2.effective_cost, abs=1e-9)
    assert s.list_cost == pytest.approx(cur2.list_cost, abs=1e-9)


def test_legacy_tag_column() -> None:
    """``tag:project`` reads the ``resourceTags/user:project`` column: p5 rows 5,504 + 1,200 +
    11,008 − 11,008, EBS 80, FSx 174 = 6,958.00 over 6 rows."""
    s = read_bill(LEGACY, by="tag:project")
    llm = next(r for r in s.breakdown if r.key == "llm")
    assert (llm.rows, llm.billed_cost) == (6, pytest.approx(6958.00, abs=1e-9))


def test_mixing_legacy_and_cur2_is_refused() -> None:
    with pytest.raises(UnsupportedBillError, match=r"cannot mix legacy CUR and CUR 2\.0 files"):
        read_bill([LEGACY, CUR_MONTH])


def _report(root: Path, assembly: str, rows: slice) -> Path:
    """One legacy report version: ``report/20260401-20260501/<assembly>/report-1.csv.gz``."""
    lines = LEGACY.read_text(encoding="utf-8").splitlines(keepends=True)
    folder = root / "report" / "20260401-20260501" / assembly
    folder.mkdir(parents=True)
    with gzip.open(folder / "report-1.csv.gz", "wt", encoding="utf-8") as fh:
        fh.writelines([lines[0], *lines[1:][rows]])
    return folder


def test_two_report_versions_without_manifest_are_refused(tmp_path: Path) -> None:
    """Two assemblies of one period would count the month twice."""
    _report(tmp_path, "aaaa-old", slice(0, 10))
    _report(tmp_path, "bbbb-new", slice(None))
    with pytest.raises(BillError, match=r"20260401-20260501 holds 2 export versions"):
        read_bill(tmp_path)


def test_period_manifest_names_the_current_version(tmp_path: Path) -> None:
    """The period's manifest (``reportKeys``) names the current assembly; each assembly folder's
    own copy is not read, so the old version's 10 rows are not added to the 24."""
    old = _report(tmp_path, "aaaa-old", slice(0, 10))
    _report(tmp_path, "bbbb-new", slice(None))
    period = tmp_path / "report" / "20260401-20260501"

    def manifest(assembly: str) -> dict[str, object]:
        key = f"prefix/report/20260401-20260501/{assembly}/report-1.csv.gz"
        return {"assemblyId": assembly, "reportKeys": [key], "bucket": "my-bucket"}

    (period / "report-Manifest.json").write_text(json.dumps(manifest("bbbb-new")))
    (old / "report-Manifest.json").write_text(json.dumps(manifest("aaaa-old")))
    s = read_bill(tmp_path)
    assert s.rows == 24
    assert s.billed_cost == pytest.approx(TOTAL, abs=1e-9)
    shutil.rmtree(period / "bbbb-new")
    with pytest.raises(BillError, match="reportKeys"):
        read_bill(tmp_path)  # the manifest's file is gone: named, not skipped


def test_legacy_parquet_with_athena_names_is_labelled_legacy(tmp_path: Path) -> None:
    """Legacy CUR's Parquet files (Athena: ``line_item_unblended_cost``, one
    ``resource_tags_user_project`` column per tag) read as the CSV does and are labelled
    ``cur-legacy``, not ``cur-2.0``; the tag column still answers ``tag:project`` (6,958.00 over
    6 rows, as ``test_legacy_tag_column``)."""
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "legacy.parquet"
    with duckdb.connect() as con:
        cols = con.execute(f"SELECT * FROM read_csv('{LEGACY}', all_varchar = true) LIMIT 0")
        renamed = ", ".join(f'"{c[0]}" AS "{canonical_column(c[0])}"' for c in cols.description)
        con.execute(
            f"COPY (SELECT {renamed} FROM read_csv('{LEGACY}', all_varchar = true)) "
            f"TO '{out}' (FORMAT parquet)"
        )
    s = read_bill(out, by="tag:project")
    assert s.format == "cur-legacy"
    assert s.billed_cost == pytest.approx(TOTAL, abs=1e-9)
    llm = next(r for r in s.breakdown if r.key == "llm")
    assert (llm.rows, llm.billed_cost) == (6, pytest.approx(6958.00, abs=1e-9))
