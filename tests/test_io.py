"""The one file-writing rule (trainbill._io): atomic, no clobber, regular files only, never an
input."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from conftest import SEED, run_cli
from trainbill._io import DestinationError, atomic_write_text, destination_problem


def _error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_a_file_that_appears_before_the_commit_is_kept(tmp_path: Path) -> None:
    """Without replace, the commit itself fails when the name exists: no check-then-rename
    window."""
    dest = tmp_path / "report.html"
    assert destination_problem(dest, replace=False) is None  # the early check passes...
    dest.write_text("theirs", encoding="utf-8")  # ...then someone else creates the file
    with pytest.raises(DestinationError, match="already exists"):
        atomic_write_text(dest, "ours")
    assert dest.read_text(encoding="utf-8") == "theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no stray temp file


def test_parallel_writers_exactly_one_wins(tmp_path: Path) -> None:
    """Eight writers of one new name: one succeeds, seven are refused, the file is the winner's."""
    dest = tmp_path / "same.html"
    won: list[int] = []
    lost: list[int] = []
    barrier = threading.Barrier(8)

    def write(i: int) -> None:
        barrier.wait()
        try:
            atomic_write_text(dest, f"writer {i}")
            won.append(i)
        except DestinationError:
            lost.append(i)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1
    assert len(lost) == 7
    assert dest.read_text(encoding="utf-8") == f"writer {won[0]}"


def test_replace_refuses_a_fifo_and_a_symlink(tmp_path: Path) -> None:
    """--force replaces a regular file only; a FIFO or a link stays what it was."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    target = tmp_path / "target.txt"
    target.write_text("kept", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(target)
    for path, kind in ((fifo, "FIFO"), (link, "symbolic link")):
        assert kind in (destination_problem(path, replace=True) or "")
        with pytest.raises(DestinationError, match=kind):
            atomic_write_text(path, "x", replace=True)
    assert fifo.is_fifo()
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "kept"


def test_replace_keeps_replacing_a_regular_file(tmp_path: Path) -> None:
    """The ordinary --force case still works."""
    dest = tmp_path / "a.toml"
    dest.write_text("old", encoding="utf-8")
    atomic_write_text(dest, "new", replace=True)
    assert dest.read_text(encoding="utf-8") == "new"


def test_an_input_is_recognised_by_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another spelling or a hard link of the input is still the input."""
    plan = tmp_path / "p.toml"
    plan.write_text("x", encoding="utf-8")
    hard = tmp_path / "hard.toml"
    os.link(plan, hard)
    monkeypatch.chdir(tmp_path)
    for spelling in (Path("./p.toml"), Path("sub/../p.toml"), hard):
        (tmp_path / "sub").mkdir(exist_ok=True)
        problem = destination_problem(spelling, replace=True, inputs=[plan])
        assert problem is not None
        assert "input file" in problem


def test_optimize_output_over_its_own_plan_is_refused_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`optimize p.toml -o p.toml --force` leaves the plan as it was."""
    plan = tmp_path / "p.toml"
    plan.write_bytes(SEED.read_bytes())
    code, _, err = run_cli(capsys, "optimize", str(plan), "-o", str(plan), "--force")
    assert code == 1
    assert "input file" in _error_line(err)
    assert plan.read_bytes() == SEED.read_bytes()


def test_report_to_a_fifo_is_refused_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report ex -o FIFO --force` leaves the FIFO in place."""
    fifo = tmp_path / "out.html"
    os.mkfifo(fifo)
    code, _, err = run_cli(capsys, "report", str(SEED), "-o", str(fifo), "--force", "--trials", "0")
    assert code == 1
    assert "not a regular file" in _error_line(err)
    assert fifo.is_fifo()


def test_bill_calibrate_over_its_own_bill_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`calibrate x.csv -o x.csv --force` keeps the bill."""
    pytest.importorskip("duckdb")
    bill = tmp_path / "x.csv"
    bill.write_text("BilledCost,BillingCurrency\n1.0,USD\n", encoding="utf-8")
    before = bill.read_bytes()
    code, _, err = run_cli(capsys, "calibrate", str(bill), "-o", str(bill), "--force")
    assert code == 1
    assert "input file" in _error_line(err)
    assert bill.read_bytes() == before


def test_the_current_folder_is_named_as_a_folder_not_an_empty_path() -> None:
    """`--ledger-xlsx .` (or an empty argument, which pathlib reads as ".") asks for a file name
    and names both, where the old text said only "an empty path"."""
    from trainbill._io import destination_problem

    assert destination_problem(Path(), replace=False) == (
        "give a file name, not the current folder '.'"
    )


def test_atomic_writes_keep_modes(tmp_path: Path) -> None:
    """mkstemp makes 0600 temp files; renamed as is, a shared 0644 file turned private."""
    shared = tmp_path / "shared.toml"
    shared.write_text("old", encoding="utf-8")
    shared.chmod(0o640)
    atomic_write_text(shared, "new", replace=True)
    assert shared.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.toml"
        atomic_write_text(fresh, "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # 0666 & ~0022
