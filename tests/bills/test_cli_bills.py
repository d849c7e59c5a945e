"""``trainbill bill summary|compare`` and ``trainbill calibrate`` through ``main()``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_MONTH, FOCUS_SAMPLE

from conftest import SEED, run_cli

pytest.importorskip("ibis")
pytest.importorskip("duckdb")


def test_summary_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    """--json has the contract keys; by_category sums to billed_cost (14,197.04)."""
    code, out, _ = run_cli(capsys, "bill", "summary", str(CUR_MONTH), "--json")
    assert code == 0
    data = json.loads(out)
    for key in (
        "format",
        "rows",
        "currency",
        "billed_cost",
        "effective_cost",
        "list_cost",
        "by_category",
        "uncategorized",
        "hidden_multiplier",
    ):
        assert key in data
    assert data["format"] == "cur-2.0"
    assert sum(data["by_category"].values()) == pytest.approx(14197.04, abs=1e-9)
    assert data["uncategorized"] == {"rows": 0, "cost": 0.0}
    assert data["hidden_multiplier"] == pytest.approx(14197.04 / 13904.0, rel=1e-12)


def test_summary_table_and_by_service(capsys: pytest.CaptureFixture[str]) -> None:
    """The table shows categories, the multiplier and a per-service breakdown."""
    code, out, _ = run_cli(capsys, "bill", "summary", str(FOCUS_SAMPLE), "--by", "service")
    assert code == 0
    assert "hidden multiplier" in out
    assert "data_transfer" in out
    assert "Amazon Elastic Compute Cloud" in out


def test_bad_file_is_one_line_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Unknown format: exit 1 and 'trainbill: error: …', no traceback."""
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "bill", "summary", str(path))
    assert code == 1
    assert err.startswith("trainbill: error: ")
    assert "Traceback" not in err


def test_calibrate_writes_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``calibrate -o`` writes a [calibration] kind="bills" file and refuses to overwrite it."""
    out_path = tmp_path / "cal.toml"
    code, _, _ = run_cli(capsys, "calibrate", str(CUR_MONTH), "-o", str(out_path))
    assert code == 0
    assert 'kind = "bills"' in out_path.read_text(encoding="utf-8")
    code, _, err = run_cli(capsys, "calibrate", str(CUR_MONTH), "-o", str(out_path))
    assert code == 1
    assert "already exists" in err


def test_compare_with_example_plan(capsys: pytest.CaptureFixture[str]) -> None:
    """``bill compare`` prices the example plan and reports per-category variance as JSON."""
    plan = SEED
    if not plan.exists():
        pytest.skip("example plan not present")
    code, out, err = run_cli(capsys, "bill", "compare", str(plan), str(CUR_MONTH), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["actual_total_usd"] == pytest.approx(14197.04, abs=1e-9)
    cats = {c["category"]: c for c in data["categories"]}
    assert cats["compute"]["variance_usd"] == pytest.approx(
        cats["compute"]["actual_usd"] - cats["compute"]["forecast_usd"]
    )
    assert data["warnings"] == []  # an AWS plan against an AWS bill with rows


def test_compare_warns_about_a_bill_of_another_provider(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An AWS plan against a Google Cloud FOCUS bill (the sample's rows relabelled): the
    table says so, naming both."""
    plan = SEED
    if not plan.exists():
        pytest.skip("example plan not present")
    text = FOCUS_SAMPLE.read_text(encoding="utf-8")
    gcp = tmp_path / "gcp.csv"
    gcp.write_text(
        text.replace('"AWS"', '"Google Cloud"')
        .replace('"Microsoft"', '"Google Cloud"')
        .replace('"Oracle"', '"Google Cloud"'),
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "bill", "compare", str(plan), str(gcp))
    assert code == 0, err
    assert "the plan is for aws but 1,000 of the bill's 1,000 rows" in " ".join(out.split())
    assert "Google Cloud (1,000 rows)" in " ".join(out.split())


def test_import_trainbill_bills_is_light() -> None:
    """Importing the bills package and its CLI loads neither Ibis, DuckDB nor PySpark."""
    code = (
        "import sys, trainbill.bills, trainbill.cli.bills; "
        "print(','.join(m for m in ('ibis', 'duckdb', 'pyspark') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


def _data_exports_folder(root: Path, *, manifests: bool) -> Path:
    """A tiny CUR 2.0 Data Exports folder: March and April 2026, each the 24-row CUR month
    (March's billing period relabelled) split into two Parquet parts under
    ``data/BILLING_PERIOD=YYYY-MM/<execution>/``, with or without ``metadata/`` manifests."""
    import duckdb

    export = root / "gpu-export"
    for period, start, end in (
        ("2026-03", "2026-03-01", "2026-04-01"),
        ("2026-04", "2026-04-01", "2026-05-01"),
    ):
        folder = export / "data" / f"BILLING_PERIOD={period}" / f"2026{period[5:]}02T000000Z-ab12"
        folder.mkdir(parents=True)
        keys = []
        with duckdb.connect() as con:
            for i in range(2):
                part = folder / f"gpu-export-0000{i + 1}.snappy.parquet"
                con.execute(
                    f"COPY (SELECT * REPLACE ('{start}T00:00:00.000Z' AS "
                    f"bill_billing_period_start_date, '{end}T00:00:00.000Z' AS "
                    f"bill_billing_period_end_date) FROM read_csv('{CUR_MONTH}', all_varchar = "
                    f"true) LIMIT 12 OFFSET {12 * i}) TO '{part}' (FORMAT parquet)"
                )
                keys.append(f"s3://bucket/exports/{part.relative_to(root).as_posix()}")
        if manifests:
            meta = export / "metadata" / f"BILLING_PERIOD={period}"
            meta.mkdir(parents=True)
            (meta / "gpu-export-Manifest.json").write_text(json.dumps({"dataFiles": keys}))
    return export


@pytest.mark.parametrize("manifests", [True, False], ids=["with-manifests", "data-only"])
def test_summary_of_a_data_exports_folder_sums_every_period(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, manifests: bool
) -> None:
    """``bill summary DIR/`` over two BILLING_PERIOD= parts of two files each reads all four:
    48 rows, 2 × 14,197.04 = 28,394.08, period 2026-03-01 → 2026-05-01."""
    export = _data_exports_folder(tmp_path, manifests=manifests)
    code, out, _ = run_cli(capsys, "bill", "summary", f"{export}/", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["files"]) == 4
    assert data["rows"] == 48
    assert data["billed_cost"] == pytest.approx(28394.08, abs=1e-9)
    assert (data["period_start"], data["period_end"]) == ("2026-03-01", "2026-05-01")


def test_two_versions_of_one_period_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Without manifests, a period holding two export versions would be counted twice: refused."""
    export = _data_exports_folder(tmp_path, manifests=False)
    march = export / "data" / "BILLING_PERIOD=2026-03"
    (march / "20260305T000000Z-cd34").mkdir()
    for part in (march / "20260302T000000Z-ab12").iterdir():
        (march / "20260305T000000Z-cd34" / part.name).write_bytes(part.read_bytes())
    code, _, err = run_cli(capsys, "bill", "summary", str(export), "--json")
    assert code == 1
    assert "BILLING_PERIOD=2026-03 holds 2 export versions" in err


def test_progress_is_off_in_json_and_quiet_modes(capsys: pytest.CaptureFixture[str]) -> None:
    """``--json`` and ``--quiet`` write nothing to stderr; the table run with progress on gives
    the same 14,197.04 total."""
    for args in (("--json",), ("--quiet", "--json"), ("--quiet",)):
        code, _, err = run_cli(capsys, "bill", "summary", str(CUR_MONTH), *args)
        assert (code, err) == (0, "")
    from trainbill.bills import read_bill

    assert read_bill(CUR_MONTH, progress=True).billed_cost == pytest.approx(14197.04, abs=1e-9)


def test_progress_bar_polls_duckdb(monkeypatch: pytest.MonkeyPatch) -> None:
    """The poller reads DuckDB's progress while the query runs and returns its rows."""
    import duckdb

    from trainbill.bills import summary

    monkeypatch.setattr(summary, "_PROGRESS_POLL_S", 0.001)
    with duckdb.connect() as con:
        columns, rows = summary._with_progress(con, "SELECT count(*) AS n FROM range(3000000)", "x")
    assert (columns, rows) == (["n"], [(3000000,)])


def test_summary_table_shows_the_reader_warnings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A row without BilledCost (data row 1 emptied) is a warning line under the table."""
    import csv

    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[1][rows[0].index("BilledCost")] = ""
    path = tmp_path / "bill.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    code, out, err = run_cli(capsys, "bill", "summary", str(path))
    assert code == 0, err
    assert "warning:" in out
    assert "1 row(s) have an empty BilledCost" in " ".join(out.split())
