"""``trainbill simulate`` on the command line: the --json contract and the tables, odd counts and
ranges are one-line errors naming the flag, and no NaN, inf or rounding negative ever reaches the
output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import EXAMPLES, SEED, refused, run_argv

#: The p4d example, run wholly on spot.
P4D_PLAN = EXAMPLES / "p4d-spot-experiment.toml"

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


@pytest.fixture
def od_plan(tmp_path: Path) -> Path:
    p = tmp_path / "od.toml"
    p.write_text(ON_DEMAND_PLAN)
    return p


def test_simulate_one_trial_prints_no_nan(
    od_plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One trial has no standard error: the table said '± nan s.e.'."""
    code, out, err = run_argv(
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
    code, out, err = run_argv(
        ["simulate", str(od_plan), "--trials", "1", "--seed", "1", "--study-trials", "0", "--json"],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["mean_events"]["failures"] == 0.0
    means = data["by_category_mean_usd"]
    assert means["failures"] == 0.0
    assert all(v >= 0 for k, v in means.items() if k != "discount"), means
    code, out, _ = run_argv(
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
    code, out, err = run_argv(
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
    refused(["simulate", str(SEED), "--trials", "10", "--spot-price-of-on-demand", text], capsys,
             "--spot-price-of-on-demand", "0 < LOW <= HIGH <= 1")  # fmt: skip


@pytest.mark.parametrize("text", ["a:b", "0.5", "1:2:3", ""])
def test_simulate_spot_range_malformed(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--spot-price-of-on-demand that is not LOW:HIGH is one error naming the flag."""
    refused(["simulate", str(SEED), "--trials", "10", "--spot-price-of-on-demand", text], capsys,
             "--spot-price-of-on-demand", "LOW:HIGH")  # fmt: skip


def test_simulate_spot_range_on_an_all_on_demand_plan(
    od_plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flag changed nothing on a plan with no spot nodes, and said nothing."""
    refused(
        ["simulate", str(od_plan), "--trials", "10", "--spot-price-of-on-demand", "0.5:0.6"],
        capsys,
        "--spot-price-of-on-demand",
        "spot_fraction = 0",
    )


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
    refused(["simulate", str(SEED), *argv], capsys, flag)


def test_cli_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json carries the contract keys; a plan deadline yields a miss probability."""
    text = SEED.read_text(encoding="utf-8").replace(
        "hours = 72 ", "hours = 72\ndeadline_hours = 80 ", 1
    )
    plan = tmp_path / "plan.toml"
    plan.write_text(text, encoding="utf-8")
    code, out, _ = run_argv(
        [
            "simulate",
            str(plan),
            "--trials",
            "2000",
            "--seed",
            "3",
            "--json",
            "--study-trials",
            "200",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    for key in (
        "trials",
        "seed",
        "elapsed_s",
        "deterministic_total_usd",
        "cost_usd",
        "wall_hours",
        "deadline_miss_probability",
        "histogram",
        "by_category_mean_usd",
        "checkpoint",
        "spot",
    ):
        assert key in data
    assert data["trials"] == 2000
    assert data["seed"] == 3
    assert set(data["cost_usd"]) >= {"mean", "p10", "p50", "p90", "p99"}
    assert 0.0 <= data["deadline_miss_probability"] <= 1.0
    hist = data["histogram"]["cost_usd"]
    assert len(hist["edges"]) == len(hist["counts"]) + 1
    assert sum(hist["counts"]) == 2000
    _code2, out2, _ = run_argv(
        [
            "simulate",
            str(plan),
            "--trials",
            "2000",
            "--seed",
            "3",
            "--json",
            "--study-trials",
            "200",
        ],
        capsys,
    )
    again = json.loads(out2)
    assert again["cost_usd"] == data["cost_usd"]


def test_cli_table_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """Table output shows percentiles and the studies; bad trials is a one-line error, exit 1."""
    code, out, _ = run_argv(
        [
            "simulate",
            str(P4D_PLAN),
            "--trials",
            "500",
            "--seed",
            "1",
            "--spot-price-of-on-demand",
            "0.65:0.75",
            "--study-trials",
            "200",
        ],
        capsys,
    )
    assert code == 0
    assert "P90" in out
    assert "Checkpoint interval" in out
    assert "Spot or not" in out
    code, _, err = run_argv(["simulate", str(P4D_PLAN), "--trials", "0"], capsys)
    assert code == 1
    assert "trainbill: error:" in err
    assert "trials must be a positive integer" in err
    assert "Traceback" not in err
    code, _, err = run_argv(
        ["simulate", str(P4D_PLAN), "--spot-price-of-on-demand", "cheap"], capsys
    )
    assert code == 1
    assert "LOW:HIGH" in err


def test_simulate_says_what_the_forecast_warns(capsys: pytest.CaptureFixture[str]) -> None:
    """Was: ``simulate --nodes 5`` on the seed (half on spot) returned ``"warnings": []`` while
    ``forecast`` on the same plan warns that 0.5 of 5 nodes is 2.5 spot nodes. The simulation
    carries every warning of the plan's forecast."""
    code, out, err = run_argv(["forecast", str(SEED), "--nodes", "5", "--json"], capsys)
    assert code == 0, err
    expected = json.loads(out)["warnings"]
    assert any("2.5 spot nodes" in w for w in expected)
    code, out, err = run_argv(
        ["simulate", str(SEED), "--nodes", "5", "--trials", "200", "--json"], capsys
    )
    assert code == 0, err
    got = json.loads(out)["warnings"]
    assert all(w in got for w in expected)
