"""``trainbill optimize`` on the command line: the --json contract, bad limits are one-line
errors naming the flag, and its output and export files never replace something the user owns
without --force."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conftest import EXAMPLES, SEED, refused, run_argv
from trainbill.catalog import Catalog
from trainbill.forecasting import forecast
from trainbill.spec import load_plan

#: The smallest optimizer search: one instance, one node count, one cloud.
SMALL_SEARCH = ["--instances", "p5.48xlarge", "--nodes", "32", "--clouds", "aws"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "16,0"])
def test_optimize_non_finite_node_counts(
    value: str, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--nodes nan / inf was a ValueError / OverflowError traceback; 0 was named space.nodes,
    the API's field, not the flag the user typed."""
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


def test_cli_json_contract_and_output_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, catalog: Catalog
) -> None:
    """--json has best/pareto/evaluated/elapsed_s; -o writes a plan that loads and forecasts the
    same."""
    out_file = tmp_path / "best.toml"
    code, out, _ = run_argv(
        [
            "optimize",
            str(SEED),
            "--clouds",
            "aws",
            "--deadline-hours",
            "100",
            "--json",
            "-o",
            str(out_file),
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    for key in ("instance", "nodes", "spot_fraction", "savings_plan", "total_usd", "wall_hours"):
        assert key in data["best"]
        assert key in data["pareto"][0]
    assert data["evaluated"] > 1000
    assert data["elapsed_s"] > 0
    written = load_plan(out_file)
    today = load_plan(SEED).prices.as_of
    assert forecast(written, catalog, today=today).total_usd == pytest.approx(
        data["best"]["total_usd"], rel=1e-6
    )


def test_cli_refuses_to_overwrite_without_force(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An existing -o file is left untouched unless --force is given."""
    out_file = tmp_path / "best.toml"
    out_file.write_text("keep me", encoding="utf-8")
    code, _, err = run_argv(["optimize", str(SEED), "-o", str(out_file)], capsys)
    assert code == 1
    assert "--force" in err
    assert out_file.read_text(encoding="utf-8") == "keep me"


def test_cli_unknown_cloud_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--clouds with a typo exits 1 with 'trainbill: error:' and the allowed values."""
    code, _, err = run_argv(["optimize", str(SEED), "--clouds", "awz"], capsys)
    assert code == 1
    assert err.startswith("trainbill: error:")
    assert "aws, gcp, azure" in err


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("32", (32,)),
        ("8,16,32", (8, 16, 32)),
        ("30..32", (30, 31, 32)),  # a range: both ends included
        ("1,...,4", (1, 2, 3, 4)),  # issue #40's spelling of the same
        ("1,2,...,5,64", (1, 2, 3, 4, 5, 64)),  # '...' fills in between its neighbours
        ("4,2..4", (4, 2, 3)),  # a count listed twice is searched once, first place kept
    ],
)
def test_optimize_node_lists_and_ranges(text: str, counts: tuple[int, ...]) -> None:
    from trainbill.cli.optimize import _node_counts

    assert _node_counts(text) == counts


def test_optimize_takes_issue_40s_node_sweep() -> None:
    """``--nodes 1,...,512`` is 512 counts, within the node axis's 1,024 (the other axes'
    64 refused it); one more than 1,024 is refused before anything is expanded."""
    from trainbill.cli.optimize import _node_counts

    assert _node_counts("1,...,512") == tuple(range(1, 513))
    assert _node_counts("1..1024") == tuple(range(1, 1025))
    with pytest.raises(Exception, match="1,025 node counts; a search takes at most 1,024"):
        _node_counts("1..1025")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("...,4", "'...' must stand between two node counts"),
        ("1,...", "'...' must stand between two node counts"),
        ("1,...,...,4", "'...' must stand between two node counts"),
        ("5..3", "from the smaller count to the larger"),
        ("1..1e308", "whole numbers from 1 to 100,000"),
        ("..5", "whole numbers from 1 to 100,000"),
    ],
)
def test_optimize_bad_node_ranges(
    value: str, says: str, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(["optimize", str(plan_copy), "--nodes", value], capsys, "--nodes", says)


def test_optimize_searches_a_node_range(capsys: pytest.CaptureFixture[str]) -> None:
    """``--nodes 30..32``: right-sizing lists exactly those three counts."""
    code, out, _ = run_argv(
        ["optimize", str(SEED), "--instances", "p5.48xlarge", "--nodes", "30..32",
         "--clouds", "aws", "--json"],
        capsys,
    )  # fmt: skip
    assert code == 0
    assert [r["nodes"] for r in json.loads(out)["rightsizing"]] == [30, 31, 32]
