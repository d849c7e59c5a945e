"""The output gate: ``--force`` never changes a file the command reads, however the path is
spelled (symlink, hard link, inside an overlay); a command's outputs are written all or none
(issue #44)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from tests.conftest import SEED, refused

from trainbill.catalog.loading import packaged_data_dir


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """A plan, an overlay holding a one-row copy of the packaged prices.csv, a bills
    calibration, and a symlink and a hard link to the plan."""
    plan = tmp_path / "plan.toml"
    shutil.copy(SEED, plan)
    overlay = tmp_path / "cat"
    overlay.mkdir()
    head = (packaged_data_dir() / "prices.csv").read_text(encoding="utf-8").splitlines()[0]
    (overlay / "prices.csv").write_text(head + "\n", encoding="utf-8")
    (tmp_path / "plan-link.toml").symlink_to(plan)
    os.link(plan, tmp_path / "plan-hard.toml")
    return {"plan": plan, "prices": overlay / "prices.csv", "overlay": overlay,
            "link": tmp_path / "plan-link.toml", "hard": tmp_path / "plan-hard.toml"}  # fmt: skip


@pytest.mark.parametrize("flag", ["-o", "--ledger-csv"])
@pytest.mark.parametrize("target", ["plan", "prices", "link", "hard"])
def test_report_never_writes_over_what_it_reads(
    inputs: dict[str, Path], flag: str, target: str, capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:  # fmt: skip
    before = {name: _digest(p) for name, p in inputs.items() if p.is_file()}
    outputs = {"-o": tmp_path / "r.html", "--ledger-csv": tmp_path / "l.csv", flag: inputs[target]}
    argv = ["report", str(inputs["plan"]), "--catalog", str(inputs["overlay"]), "--trials", "0",
            "--force", *(x for f, p in outputs.items() for x in (f, str(p)))]  # fmt: skip
    refused(argv, capsys, "is the command's input file")
    assert {name: _digest(p) for name, p in inputs.items() if p.is_file()} == before
    assert not (tmp_path / "r.html").exists()  # nothing written: all or none
    assert not (tmp_path / "l.csv").exists()


def test_optimize_never_writes_over_its_calibration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("duckdb")
    cal = tmp_path / "cal.toml"
    bill = Path(__file__).parent.parent / "data" / "bills" / "focus_sample.csv"
    from tests.conftest import run_argv

    code, _, err = run_argv(["calibrate", str(bill), "-o", str(cal)], capsys)
    assert code == 0, err
    before = _digest(cal)
    argv = ["optimize", str(SEED), "--calibration", str(cal), "-o", str(cal), "--force",
            "--instances", "p5.48xlarge", "--nodes", "32", "--clouds", "aws"]  # fmt: skip
    refused(argv, capsys, "--output", "is the command's input file")
    assert _digest(cal) == before


def test_a_failed_second_output_leaves_no_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/proc takes no new file: the workbook fails, so the HTML (first in line) is not left."""
    html = tmp_path / "r.html"
    argv = ["report", str(SEED), "-o", str(html), "--ledger-csv", "/proc/trainbill-ledger.csv",
            "--trials", "0"]  # fmt: skip
    refused(argv, capsys, "--ledger-csv", "cannot write /proc/trainbill-ledger.csv")
    assert not html.exists()


def test_calibrate_and_profile_never_write_over_their_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bill given to ``calibrate`` and the step script given to ``profile``, as ``-o``."""
    pytest.importorskip("duckdb")
    bill = tmp_path / "bill.csv"
    shutil.copy(Path(__file__).parent.parent / "data" / "bills" / "focus_sample.csv", bill)
    before = _digest(bill)
    refused(["calibrate", str(bill), "-o", str(bill), "--force"], capsys, "input file")
    assert _digest(bill) == before
    script = tmp_path / "step.py"
    script.write_text("def make_step():\n    return (lambda: None), 1\n", encoding="utf-8")
    before = _digest(script)
    refused(["profile", "--script", str(script), "-o", str(script), "--force"], capsys, "input")
    assert _digest(script) == before
