"""``runs export --format focus``: FOCUS 1.2 rows that the FinOps Foundation's focus-validator
2.2.1 passes, but for the self-contradictory InvoiceId-C-004-C / C-005-C pair.

The validator needs Python >= 3.12 and NumPy >= 2, so it lives in a virtual environment of its
own: ``TRAINBILL_FOCUS_VALIDATOR`` names that environment's Python (``.ci/run`` builds it).
It reads its rule files relative to the working directory, so it runs from the folder holding
its package, and it exits 0 even when rules fail: the test reads its "Total | Pass | Fail"
line and the failed rule ids.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import SEED, run_cli

VALIDATOR_ENV = "TRAINBILL_FOCUS_VALIDATOR"


@pytest.mark.parametrize(
    ("unit", "focus"),
    [
        ("instance-hour", "Instance-Hours"),
        ("hour", "Hours"),
        ("GB-month", "GB-Months"),
        ("IOPS-month", "IOPS-Months"),
        ("1000 requests", "1000 Requests"),
        ("GB", "GB"),
        ("", "Units"),
    ],
)
def test_units_in_focus_format(unit: str, focus: str) -> None:
    from trainbill.runs.focus_export import focus_unit

    assert focus_unit(unit) == focus


def _export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, list[dict[str, str]]]:
    db = str(tmp_path / "runs.sqlite")
    for rid in ("run-1", "run-2"):
        code, _, err = run_cli(capsys, "runs", "record", str(SEED), "--id", rid, "--db", db)
        assert code == 0, err
    out = tmp_path / "forecasts.csv"
    code, stdout, err = run_cli(
        capsys, "runs", "export", "--format", "focus", "-o", str(out), "--db", db, "--json"
    )
    assert code == 0, err
    with out.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert json.loads(stdout)["rows"] == len(rows)
    return out, rows


def test_export_rows_are_the_forecast_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One row per ledger line of each run, marked as a forecast, costs summing to the run's
    stored total; an existing file is kept without --force."""
    out, rows = _export(tmp_path, capsys)
    code, shown, _ = run_cli(
        capsys, "runs", "show", "run-1", "--db", str(tmp_path / "runs.sqlite"), "--json"
    )
    total = json.loads(shown)["forecast_total_usd"]
    mine = [r for r in rows if r["x_TrainbillRunId"] == "run-1"]
    assert {r["x_TrainbillForecast"] for r in rows} == {"forecast"}
    assert sum(float(r["BilledCost"]) for r in mine) == pytest.approx(total, rel=1e-9)
    assert all(json.loads(r["Tags"]) == {"trainbill-run": "run-1"} for r in mine)
    code, _, err = run_cli(
        capsys, "runs", "export", "-o", str(out), "--db", str(tmp_path / "runs.sqlite")
    )
    assert code == 1
    assert "--force" in err


def test_focus_validator_passes_all_but_the_invoice_id_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    python = os.environ.get(VALIDATOR_ENV)
    if not python or not Path(python).exists():
        pytest.skip(
            f"focus-validator 2.2.1 needs a Python >= 3.12 venv of its own: set {VALIDATOR_ENV} "
            "to its python (.ci/run builds one when such an interpreter exists)"
        )
    out, _ = _export(tmp_path, capsys)
    here = (
        "import focus_validator, os; "
        "print(os.path.dirname(os.path.dirname(focus_validator.__file__)))"
    )
    where = subprocess.run(
        [python, "-c", here],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    exe = str(Path(python).parent / "focus-validator")
    run = subprocess.run(
        [exe, "--data-file", str(out), "--validate-version", "1.2", "--block-download"],
        capture_output=True, text=True, cwd=where, timeout=600, check=False,
    )  # fmt: skip
    text = run.stdout + run.stderr
    m = re.search(r"Total: (\d+) \| Pass: (\d+) \| Fail: (\d+)", text)
    assert m is not None, text[-2000:]
    failed = sorted(set(re.findall(r"❌ ([A-Za-z]+-[A-Z]-\d{3}-[A-Z]): FAIL", text)))
    assert failed == ["InvoiceId-C-005-C"], text[-3000:]
    assert int(m.group(3)) == 1
    assert int(m.group(2)) > 100  # the rules that apply were run, not skipped
