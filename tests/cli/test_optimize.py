"""``trainbill optimize`` on the command line: bad limits are one-line errors naming the flag,
and its output and export files never replace something the user owns without --force."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import EXAMPLES, refused, run_argv

#: The smallest optimizer search: one instance, one node count, one cloud.
SMALL_SEARCH = ["--instances", "p5.48xlarge", "--nodes", "32", "--clouds", "aws"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_optimize_non_finite_node_counts(
    value: str, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--nodes nan / inf was a ValueError / OverflowError traceback."""
    refused(["optimize", str(plan_copy), "--nodes", value], capsys, "--nodes", "whole numbers")


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--deadline-hours", "inf"), ("--budget-usd", "inf"), ("--budget-usd", "nan")],
)
def test_optimize_non_finite_limits(
    flag: str, value: str, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--deadline-hours inf ran and printed 'deadline inf h'."""
    refused(["optimize", str(plan_copy), flag, value], capsys, flag, "finite")


def test_optimize_output_is_a_directory(
    tmp_path: Path, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o DIR said 'file exists; pass --force', and with --force was an IsADirectoryError
    traceback."""
    for extra in ([], ["--force"]):
        refused(
            ["optimize", str(plan_copy), "-o", str(tmp_path), *extra],
            capsys,
            "--output",
            "is a directory",
        )
        refused(
            [
                "optimize",
                str(plan_copy),
                "--export",
                "skypilot",
                "--export-file",
                str(tmp_path),
                *extra,
            ],
            capsys,
            "--export-file",
            "is a directory",
        )
    assert tmp_path.is_dir()


def test_optimize_output_below_a_file(plan_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A parent that is a file was a FileExistsError traceback (after the whole search)."""
    refused(["optimize", str(plan_copy), "-o", str(plan_copy / "best.toml"), *SMALL_SEARCH], capsys,
             "--output", "is a file, not a folder")  # fmt: skip


def test_optimize_export_never_replaces_the_plan(
    plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SkyPilot YAML written over the plan it was made from destroys it, --force or not."""
    before = plan_copy.read_bytes()
    for extra in ([], ["--force"]):
        refused(
            [
                "optimize",
                str(plan_copy),
                "--export",
                "skypilot",
                "--export-file",
                str(plan_copy),
                *extra,
            ],
            capsys,
            "--export-file",
        )
    assert plan_copy.read_bytes() == before


def test_optimize_written_files_keep_normal_permissions(
    tmp_path: Path, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The atomic write's temp file is 0600: a new file came out 0600 and a replaced 0640 file
    lost its group read. New: 0666 minus the umask; replaced: the mode it had."""
    umask = os.umask(0o022)
    try:
        new = tmp_path / "best.toml"
        code, _, err = run_argv(["optimize", str(plan_copy), "-o", str(new), *SMALL_SEARCH], capsys)
        assert code == 0, err
        assert stat.S_IMODE(new.stat().st_mode) == 0o644  # 0o666 & ~0o022
        old = tmp_path / "old.toml"
        old.write_text("# mine\n")
        old.chmod(0o640)
        code, _, err = run_argv(
            ["optimize", str(plan_copy), "-o", str(old), "--force", *SMALL_SEARCH], capsys
        )
        assert code == 0, err
        assert stat.S_IMODE(old.stat().st_mode) == 0o640
        assert old.read_text().startswith("# Written by 'trainbill optimize")
    finally:
        os.umask(umask)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a Linux /proc")
def test_optimize_unwritable_output_is_one_line(
    plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An OSError from the write (here: /proc takes no new files) is an error naming the flag."""
    refused(["optimize", str(plan_copy), "-o", "/proc/trainbill-best.toml", *SMALL_SEARCH], capsys,
             "--output", "cannot write /proc/trainbill-best.toml")  # fmt: skip


def test_optimize_without_deadline_says_why_the_best_is_slow(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With no deadline the cheapest plan (8 nodes) runs far longer than the user's 64; say so."""
    plan = str(EXAMPLES / "pretrain-512-h100.toml")
    args = ["--instances", "p5.48xlarge", "--nodes", "8", "--clouds", "aws"]
    code, out, _ = run_argv(["optimize", plan, *args], capsys)
    assert code == 0
    assert "no deadline was given, so the cheapest plan may run longest" in " ".join(out.split())
    code, out, _ = run_argv(["optimize", plan, *args, "--deadline-hours", "200"], capsys)
    assert code == 0
    assert "no deadline was given" not in out
