"""A careless user's command lines: each bad or odd value is a one-line error naming the option
(exit 1, no traceback), never a NaN/inf/negative number in the output, never a silently ignored
flag, and never a write over something the user owns without --force."""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

import pytest

from cli_runner import run_argv
from conftest import EXAMPLES, PROFILE_TOML

SEED = EXAMPLES / "seed-70b-finetune.toml"
PRETRAIN = EXAMPLES / "pretrain-512-h100.toml"

#: 2 × p5.48xlarge, 10 h, all on demand, default reliability.
ON_DEMAND_PLAN = """
[run]
hours = 10
deadline_hours = 11
[model]
params = 7e9
[cluster]
instance = "p5.48xlarge"
nodes = 2
"""


#: The smallest optimizer search: one instance, one node count, one cloud.
SMALL_SEARCH = ["--instances", "p5.48xlarge", "--nodes", "32", "--clouds", "aws"]


_run = run_argv


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """Exit 1 with exactly one 'trainbill: error:' line containing every needle."""
    code, _, err = _run(argv, capsys)
    assert code == 1, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("trainbill: error:"), err
    for needle in needles:
        assert needle in lines[0], (needle, err)
    return lines[0]


@pytest.fixture
def plan_copy(tmp_path: Path) -> Path:
    """A private copy of the seed example (tests must never write next to the real one)."""
    p = tmp_path / "plan.toml"
    p.write_bytes(SEED.read_bytes())
    return p


@pytest.fixture
def od_plan(tmp_path: Path) -> Path:
    p = tmp_path / "od.toml"
    p.write_text(ON_DEMAND_PLAN)
    return p


# --- forecast ----------------------------------------------------------------------------------


def test_forecast_gpus_and_nodes_together_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--gpus 8 --nodes 3 used to price 3 nodes (24 GPUs) and drop --gpus silently."""
    _refused(
        ["forecast", "--params", "7e9", "--tokens", "1e11", "--gpu", "h100", "--gpus", "8", "--nodes", "3"],
        capsys, "--gpus", "--nodes", "not both",
    )  # fmt: skip
    _refused(["forecast", str(SEED), "--gpus", "64", "--nodes", "2"], capsys, "not both")


def test_forecast_instance_flag_replaces_the_files_gpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file with gpu = a100-80gb and --instance p5.48xlarge: the flag wins (it used to be an
    error, 'p5.48xlarge holds h100, not a100-80gb'); 16 GPUs / 8 per node = 2 nodes."""
    plan = tmp_path / "gpu.toml"
    plan.write_text(
        '[run]\nhours = 10\n[model]\nparams = 7e9\n[cluster]\ngpu = "a100-80gb"\ngpus = 16\n'
    )
    code, out, err = _run(["forecast", str(plan), "--instance", "p5.48xlarge", "--json"], capsys)
    assert code == 0, err
    cluster = json.loads(out)["cluster"]
    assert cluster["instance"] == "p5.48xlarge"
    assert cluster["accelerator"] == "h100"
    assert cluster["nodes"] == 2
    assert cluster["gpus"] == 16


def test_forecast_sparsity_zero_note_gives_the_real_attention_share(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """At sparsity 0 the note said 'attention is 0.0% of FLOPs' (saving / sparsity, guarded).

    The 13B example: 12·L·d·s = 12 × 40 × 5120 × 4096 = 10,066,329,600 FLOPs per token of
    attention; 6·N = 78e9. Share = 10.066e9 / 88.066e9 = 11.43% → '11.4%'.
    """
    share = 12 * 40 * 5120 * 4096 / (6 * 13e9 + 12 * 40 * 5120 * 4096)
    assert f"{share:.1%}" == "11.4%"
    code, out, err = _run(["forecast", str(PRETRAIN), "--attention-sparsity", "0"], capsys)
    assert code == 0, err
    assert "attention is 11.4% of FLOPs" in out
    assert "attention is 0.0% of FLOPs" not in out


def test_forecast_sparsity_with_profile_calibration_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sparsity what-if fixes run.hours, after which a measured MFU was silently unused."""
    cal = tmp_path / "cal.toml"
    cal.write_text(PROFILE_TOML)
    _refused(
        ["forecast", str(PRETRAIN), "--attention-sparsity", "0.5", "--calibration", str(cal)],
        capsys, "--attention-sparsity", "--calibration",
    )  # fmt: skip


# --- simulate ----------------------------------------------------------------------------------


def test_simulate_one_trial_prints_no_nan(
    od_plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One trial has no standard error: the table said '± nan s.e.'."""
    code, out, err = _run(
        ["simulate", str(od_plan), "--trials", "1", "--seed", "1", "--study-trials", "0"], capsys
    )
    assert code == 0, err
    assert "nan" not in out.lower()
    assert "s.e. n/a with one trial" in out


def test_simulate_category_means_are_never_rounding_negatives(
    od_plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One trial with no failure: the failures mean was -1.1e-16 (printed '-$0').

    Expected failures = 4.74e-4 per GPU-day × 16 GPUs × ~10.6 h / 24 ≈ 0.0034, so seed 1's
    single trial has none, and no category but the discount can be below zero.
    """
    code, out, err = _run(
        ["simulate", str(od_plan), "--trials", "1", "--seed", "1", "--study-trials", "0", "--json"],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["mean_events"]["failures"] == 0.0
    means = data["by_category_mean_usd"]
    assert means["failures"] == 0.0
    assert all(v >= 0 for k, v in means.items() if k != "discount"), means
    code, out, _ = _run(
        ["simulate", str(od_plan), "--trials", "1", "--seed", "1", "--study-trials", "0"], capsys
    )
    assert code == 0
    assert "-$0" not in out


def test_simulate_without_failures_prints_no_inf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No GPU failures and no spot: the job MTBF is undefined, not 'inf h'."""
    plan = tmp_path / "nofail.toml"
    plan.write_text(ON_DEMAND_PLAN + "[reliability]\ngpu_failure_rate_per_gpu_day = 0\n")
    code, out, err = _run(
        ["simulate", str(plan), "--trials", "50", "--seed", "1", "--study-trials", "50"], capsys
    )
    assert code == 0, err
    assert "Checkpoint interval" in out
    assert "inf h" not in out
    assert "MTBF n/a" in out


@pytest.mark.parametrize(
    "text", ["1:2", "0.5:1.5", "1e308:1e308", "nan:0.5", "0.5:inf", "0.9:0.1", "0:0.5", "-1:0.5"]
)
def test_simulate_spot_range_out_of_bounds(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Spot never costs more than on-demand: 0 < LOW <= HIGH <= 1, finite; the error names the flag
    (1:2 used to run, 1e308 became an 'inf' internal parameter)."""
    _refused(["simulate", str(SEED), "--trials", "10", "--spot-price-of-on-demand", text], capsys,
             "--spot-price-of-on-demand", "0 < LOW <= HIGH <= 1")  # fmt: skip


@pytest.mark.parametrize("text", ["a:b", "0.5", "1:2:3", ""])
def test_simulate_spot_range_malformed(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["simulate", str(SEED), "--trials", "10", "--spot-price-of-on-demand", text], capsys,
             "--spot-price-of-on-demand", "LOW:HIGH")  # fmt: skip


def test_simulate_spot_range_on_an_all_on_demand_plan(
    od_plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flag changed nothing on a plan with no spot nodes, and said nothing."""
    _refused(["simulate", str(od_plan), "--trials", "10", "--spot-price-of-on-demand", "0.5:0.6"], capsys,
             "--spot-price-of-on-demand", "spot_fraction = 0")  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--trials", str(10**9)], "--trials"),
        (["--trials", "0"], "--trials"),
        (["--seed", "-1"], "--seed"),
        (["--chunk-size", "0"], "--chunk-size"),
    ],
)
def test_simulate_counts_name_their_flag(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checked before the plan is read and before a progress bar is drawn (10**9 trials used to
    start one on stderr first): the whole of stderr is the one error line."""
    _refused(["simulate", str(SEED), *argv], capsys, flag)


# --- optimize ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_optimize_non_finite_node_counts(
    value: str, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--nodes nan / inf was a ValueError / OverflowError traceback."""
    _refused(["optimize", str(plan_copy), "--nodes", value], capsys, "--nodes", "whole numbers")


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--deadline-hours", "inf"), ("--budget-usd", "inf"), ("--budget-usd", "nan")],
)
def test_optimize_non_finite_limits(
    flag: str, value: str, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--deadline-hours inf ran and printed 'deadline inf h'."""
    _refused(["optimize", str(plan_copy), flag, value], capsys, flag, "finite")


def test_optimize_output_is_a_directory(
    tmp_path: Path, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o DIR said 'file exists; pass --force', and with --force was an IsADirectoryError traceback."""
    for extra in ([], ["--force"]):
        _refused(
            ["optimize", str(plan_copy), "-o", str(tmp_path), *extra],
            capsys,
            "--output",
            "is a directory",
        )
        _refused(["optimize", str(plan_copy), "--export", "skypilot", "--export-file", str(tmp_path), *extra],
                 capsys, "--export-file", "is a directory")  # fmt: skip
    assert tmp_path.is_dir()


def test_optimize_output_below_a_file(plan_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A parent that is a file was a FileExistsError traceback (after the whole search)."""
    _refused(["optimize", str(plan_copy), "-o", str(plan_copy / "best.toml"), *SMALL_SEARCH], capsys,
             "--output", "is a file, not a folder")  # fmt: skip


def test_optimize_export_never_replaces_the_plan(
    plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SkyPilot YAML written over the plan it was made from destroys it, --force or not."""
    before = plan_copy.read_bytes()
    for extra in ([], ["--force"]):
        _refused(["optimize", str(plan_copy), "--export", "skypilot", "--export-file", str(plan_copy), *extra],
                 capsys, "--export-file")  # fmt: skip
    assert plan_copy.read_bytes() == before


def test_optimize_written_files_keep_normal_permissions(
    tmp_path: Path, plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The atomic write's temp file is 0600: a new file came out 0600 and a replaced 0640 file
    lost its group read. New: 0666 minus the umask; replaced: the mode it had."""
    umask = os.umask(0o022)
    try:
        new = tmp_path / "best.toml"
        code, _, err = _run(["optimize", str(plan_copy), "-o", str(new), *SMALL_SEARCH], capsys)
        assert code == 0, err
        assert stat.S_IMODE(new.stat().st_mode) == 0o644  # 0o666 & ~0o022
        old = tmp_path / "old.toml"
        old.write_text("# mine\n")
        old.chmod(0o640)
        code, _, err = _run(
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
    _refused(["optimize", str(plan_copy), "-o", "/proc/trainbill-best.toml", *SMALL_SEARCH], capsys,
             "--output", "cannot write /proc/trainbill-best.toml")  # fmt: skip


# --- report ------------------------------------------------------------------------------------


def test_report_never_replaces_its_plan(
    plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o PLAN --force wrote HTML over the plan file."""
    before = plan_copy.read_bytes()
    _refused(["report", str(plan_copy), "-o", str(plan_copy), "--force", "--trials", "0"], capsys,
             "--output", "input file")  # fmt: skip
    assert plan_copy.read_bytes() == before


def test_report_output_below_a_file(plan_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was a FileExistsError traceback from mkdir."""
    _refused(["report", str(plan_copy), "-o", str(plan_copy / "r.html"), "--trials", "0"], capsys,
             "--output", "is a file, not a folder")  # fmt: skip


def test_report_negative_seed_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    _refused(["report", str(SEED), "-o", str(out), "--seed", "-1"], capsys, "--seed")
    assert not out.exists()


def test_report_existing_file_kept_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    out.write_text("mine")
    _refused(
        ["report", str(SEED), "-o", str(out), "--trials", "0"], capsys, "already exists", "--force"
    )
    assert out.read_text() == "mine"
    _refused(
        ["report", str(SEED), "-o", str(tmp_path), "--force", "--trials", "0"],
        capsys,
        "is a directory",
    )


def test_finite_option_helper() -> None:
    """The shared check behind --deadline-hours/--budget-usd: finite and > 0, else SpecError."""
    from trainbill.cli._common import finite_option
    from trainbill.errors import SpecError

    assert finite_option(None, "--x") is None
    assert finite_option(2.5, "--x") == 2.5
    for bad in (math.nan, math.inf, -math.inf, 0.0, -1.0):
        with pytest.raises(SpecError, match="--x"):
            finite_option(bad, "--x")


def test_serve_refuses_a_busy_port_before_announcing(capsys: pytest.CaptureFixture[str]) -> None:
    """uvicorn logged the bind error after "serving on …" had been printed."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, out, err = _run(["serve", "--port", str(port)], capsys)
    assert code == 1
    assert "serving on" not in out
    assert f"--port: cannot listen on 127.0.0.1:{port}" in err


def test_serve_names_an_unresolvable_host(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["serve", "--host", "not a host", "--port", "8000"], capsys)
    assert code == 1
    assert "serving on" not in out
    assert "--host: cannot resolve 'not a host'" in err


def test_optimize_without_deadline_says_why_the_best_is_slow(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With no deadline the cheapest plan (8 nodes) runs far longer than the user's 64; say so."""
    plan = str(EXAMPLES / "pretrain-512-h100.toml")
    args = ["--instances", "p5.48xlarge", "--nodes", "8", "--clouds", "aws"]
    code, out, _ = _run(["optimize", plan, *args], capsys)
    assert code == 0
    assert "no deadline was given, so the cheapest plan may run longest" in " ".join(out.split())
    code, out, _ = _run(["optimize", plan, *args, "--deadline-hours", "200"], capsys)
    assert code == 0
    assert "no deadline was given" not in out


def test_a_plan_nested_past_the_recursion_limit_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TOML array nested 30,000 deep (RecursionError in tomllib) is a one-line error naming the file."""
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 30_000 + "]" * 30_000 + "\n", encoding="utf-8")
    _refused(["forecast", str(deep)], capsys, "deep.toml", "nested too deeply")
