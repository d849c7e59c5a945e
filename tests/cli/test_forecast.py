"""CLI: ``trainbill forecast`` and ``trainbill check``: output contracts, flags, and one-line errors
for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, PROFILE_TOML, SEED, refused, run_argv


def test_forecast_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    """--json carries the contract keys and the article's quote."""
    code, out, _ = run_argv(["forecast", str(SEED), "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    for key in ("quote_usd", "total_usd", "multiplier", "time", "lines", "by_category", "catalog"):
        assert key in data
    assert set(data["time"]) >= {"wall_hours", "gpu_hours", "compute_hours"}
    assert set(data["catalog"]) >= {"as_of", "version"}
    assert round(data["quote_usd"], 2) == 226529.28
    assert data["catalog"]["as_of"] == "2025-05-01"
    line = data["lines"][0]
    assert set(line) >= {
        "category",
        "item",
        "quantity",
        "unit",
        "unit_price_usd",
        "cost_usd",
        "basis",
        "source",
    }
    assert sum(data["by_category"].values()) == pytest.approx(data["total_usd"])


def test_forecast_table_and_csv(capsys: pytest.CaptureFixture[str]) -> None:
    """The table shows quote, real bill and multiplier; --csv has one row per line."""
    code, out, _ = run_argv(["forecast", str(SEED)], capsys)
    assert code == 0
    assert "$226,529" in out
    assert "multiplier" in out
    code, out, _ = run_argv(["forecast", str(SEED), "--csv"], capsys)
    rows = out.strip().splitlines()
    assert rows[0].startswith("category,item,quantity,unit,unit_price_usd,cost_usd")
    assert len(rows) > 10


def test_forecast_flags_without_file(capsys: pytest.CaptureFixture[str]) -> None:
    """Flags alone build a plan; --gpu h100 --gpus 512 picks 64 × p5.48xlarge."""
    code, out, _ = run_argv(
        [
            "forecast",
            "--params",
            "70e9",
            "--tokens",
            "1.4e12",
            "--gpu",
            "h100",
            "--gpus",
            "512",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert data["cluster"]["instance"] == "p5.48xlarge"
    assert data["cluster"]["nodes"] == 64


def test_counts_with_paper_suffixes(capsys: pytest.CaptureFixture[str]) -> None:
    """--params 70B --tokens 1.4T is the plan of 70e9 and 1.4e12 (70 × 1e9, 1.4 × 1e12): the
    same JSON. A suffix alone is still not a number."""
    tail = ["--gpu", "h100", "--gpus", "512", "--json"]
    code, written, _ = run_argv(["forecast", "--params", "70B", "--tokens", "1.4t", *tail], capsys)
    assert code == 0
    code, plain, _ = run_argv(["forecast", "--params", "70e9", "--tokens", "1.4e12", *tail], capsys)
    assert code == 0
    assert json.loads(written) == json.loads(plain)
    refused(["forecast", "--params", "B", "--tokens", "1T", *tail], capsys, "--params: 'B'")


def test_flags_override_file(capsys: pytest.CaptureFixture[str]) -> None:
    """--nodes 16 overrides the file's 32 nodes: quote 16 × 98.32 × 72."""
    code, out, _ = run_argv(["forecast", str(SEED), "--nodes", "16", "--json"], capsys)
    assert code == 0
    assert json.loads(out)["quote_usd"] == pytest.approx(16 * 98.32 * 72)


def test_as_of_today_uses_new_price(capsys: pytest.CaptureFixture[str]) -> None:
    """--as-of 2026-12-01 prices p5.48xlarge at $55.04: quote 32 × 55.04 × 72."""
    code, out, _ = run_argv(
        ["forecast", str(SEED), "--as-of", "2026-12-01", "--json"],
        capsys,
    )
    assert code == 0
    assert json.loads(out)["quote_usd"] == pytest.approx(32 * 55.04 * 72)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("[run\nhours=1", "invalid TOML"),
        (
            "[cluster]\ninstance='p5.48xlarge'\nnodes=2\nnodez=3\n[run]\nhours=1",
            "cluster.nodez: unknown key. Did you mean 'nodes'?",
        ),
        (
            "[cluster]\ninstance='p5.48xlarge'\nnodes=-2\n[run]\nhours=1",
            "cluster.nodes: input should be greater than 0",
        ),
        (
            "[cluster]\ninstance='p5.48xlarge'\nnodes=2\n[run]\nhours=0",
            "run.hours: input should be greater than 0",
        ),
        ("[cluster]\ninstance='p5.48xlarg'\nnodes=2\n[run]\nhours=1", "Did you mean 'p5.48xlarge'"),
        # p5 was first sold on 2023-07-26 (its launch price point): an earlier date names the
        # launch.
        (
            "[cluster]\ninstance='p5.48xlarge'\nnodes=2\n[run]\nhours=1\n[prices]\nas_of=2019-01-01",
            "p5.48xlarge was not sold on 2019-01-01: it launched on 2023-07-26",
        ),
        ("[cluster]\ngpu='h1000'\ngpus=8\n[run]\nhours=1", "unknown GPU/accelerator 'h1000'"),
        # TOML booleans are not numbers (pydantic's lax mode alone would read true as 1 node).
        (
            "[cluster]\ninstance='p5.48xlarge'\nnodes=true\n[run]\nhours=1",
            "cluster.nodes: expected a number or text, not the boolean true",
        ),
        (
            "[cluster]\ninstance='p5.48xlarge'\nnodes=2\n[run]\nhours=1\n[evaluation]\ninterval_steps=false",
            "evaluation.interval_steps: expected a number",
        ),
        (
            "[cluster]\ninstance='p5.48xlarge'\nnodes=2\norchestrator='k8s'\n[run]\nhours=1",
            "allowed values: 'ec2', 'vm', 'hyperpod' or 'eks'",
        ),
    ],
)
def test_bad_plan_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    """Bad input: exit 1, one line on stderr naming the problem, no traceback."""
    plan = tmp_path / "plan.toml"
    plan.write_text(content)
    code, _out, err = run_argv(["forecast", str(plan)], capsys)
    assert code == 1
    assert expected in err
    assert "Traceback" not in err
    assert err.count("\n") == 1
    assert (
        str(plan) in err
        or "Did you mean" in err
        or "unknown GPU" in err
        or "first price point" in err
        or "was not sold" in err
    )


def test_malformed_toml_names_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """tomllib's position is passed through: the user sees line and column."""
    plan = tmp_path / "p.toml"
    plan.write_text("[run]\nhours = = 3\n")
    code, _, err = run_argv(["forecast", str(plan)], capsys)
    assert code == 1
    assert "line 2, column" in err


def test_check_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The article's $1.5M quote is reported impossible, with exit status 3 (as --claims)."""
    code, out, _ = run_argv(
        [
            "check",
            "--cost",
            "1.5e6",
            "--params",
            "70e9",
            "--tokens",
            "1.4e12",
            "--gpu",
            "h100",
            "--gpus",
            "512",
            "--as-of",
            "2025-05-01",
        ],
        capsys,
    )
    assert code == 3
    assert "IMPOSSIBLE" in out
    assert "1,338 TFLOP/s" in out


def test_python_dash_m() -> None:
    """``python -m trainbill --help`` works."""
    res = subprocess.run(
        [sys.executable, "-m", "trainbill", "--help"], capture_output=True, text=True, check=False
    )
    assert res.returncode == 0
    assert "forecast" in res.stdout


PRETRAIN = EXAMPLES / "pretrain-512-h100.toml"


def test_forecast_gpus_and_nodes_together_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--gpus 8 --nodes 3 used to price 3 nodes (24 GPUs) and drop --gpus silently."""
    refused(
        [
            "forecast",
            "--params",
            "7e9",
            "--tokens",
            "1e11",
            "--gpu",
            "h100",
            "--gpus",
            "8",
            "--nodes",
            "3",
        ],
        capsys,
        "--gpus",
        "--nodes",
        "not both",
    )
    refused(["forecast", str(SEED), "--gpus", "64", "--nodes", "2"], capsys, "not both")


def test_forecast_instance_flag_replaces_the_files_gpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file with gpu = a100-80gb and --instance p5.48xlarge: the flag wins (it used to be an
    error, 'p5.48xlarge holds h100, not a100-80gb'); 16 GPUs / 8 per node = 2 nodes."""
    plan = tmp_path / "gpu.toml"
    plan.write_text(
        '[run]\nhours = 10\n[model]\nparams = 7e9\n[cluster]\ngpu = "a100-80gb"\ngpus = 16\n'
    )
    code, out, err = run_argv(
        ["forecast", str(plan), "--instance", "p5.48xlarge", "--json"], capsys
    )
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
    code, out, err = run_argv(["forecast", str(PRETRAIN), "--attention-sparsity", "0"], capsys)
    assert code == 0, err
    assert "attention is 11.4% of FLOPs" in out
    assert "attention is 0.0% of FLOPs" not in out


def test_forecast_sparsity_with_profile_calibration_cuts_the_measured_hours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was refused (the what-if wrote fixed hours, after which a measured MFU derived nothing).
    Now the measured MFU sets the hours and the what-if cuts them: at 50% sparsity on the 13B
    example (seq 4,096), attention's timed work is 0.5 × 12 × 40 × 5120 × 4096 = 5.0332e9 FLOPs
    per token of 7.8e10 + 5.0332e9: 6.0617% of the time, so the hours fall by 3.0308%."""
    cal = tmp_path / "cal.toml"
    cal.write_text(PROFILE_TOML)
    code, out, err = run_argv(["forecast", str(PRETRAIN), "--calibration", str(cal), "--json"],
                              capsys)  # fmt: skip
    assert code == 0, err
    measured = json.loads(out)["time"]["compute_hours"]
    argv = ["forecast", str(PRETRAIN), "--attention-sparsity", "0.5", "--calibration", str(cal)]
    code, out, err = run_argv([*argv, "--json"], capsys)
    assert code == 0, err
    timed = 0.5 * 12 * 40 * 5120 * 4096
    saving = 0.5 * timed / (6 * 13e9 + timed)
    assert json.loads(out)["time"]["compute_hours"] == pytest.approx(measured * (1 - saving))


def test_forecast_sparsity_zero_changes_nothing_but_the_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Was: ``--attention-sparsity 0`` wrote the modelled hours into the plan as stated hours,
    so the time model's P10-P90 band and its share of the P90 budget vanished (the 13B example's
    budget fell ~43% with nothing changed). Sparsity 0 removes no work: every figure, the band
    included, is the plain forecast's; only the what-if's note is added (as a warning, a caution
    of kind ``whatif`` and a time-model factor)."""
    code, out, err = run_argv(["forecast", str(PRETRAIN), "--json"], capsys)
    assert code == 0, err
    plain = json.loads(out)
    code, out, err = run_argv(
        ["forecast", str(PRETRAIN), "--attention-sparsity", "0", "--json"], capsys
    )
    assert code == 0, err
    zero = json.loads(out)
    assert plain["time"]["gpu_hours_range_high"] > plain["time"]["gpu_hours"]
    before = plain.pop("warnings")
    added = [w for w in zero.pop("warnings") if w not in before]
    assert len(added) == 1
    assert "attention sparsity 0%" in added[0]
    assert [c["text"] for c in zero["cautions"] if c["kind"] == "whatif"] == added
    zero["cautions"] = [c for c in zero["cautions"] if c["kind"] != "whatif"]
    assert zero["time"]["factors"].pop() == {"factor": "whatif", "explanation": added[0]}
    assert zero == plain


def test_a_plan_nested_past_the_recursion_limit_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A TOML array nested 30,000 deep (RecursionError in tomllib) is a one-line error naming the
    file."""
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 30_000 + "]" * 30_000 + "\n", encoding="utf-8")
    refused(["forecast", str(deep)], capsys, "deep.toml", "nested too deeply")


def test_forecast_counts_its_action_notes(capsys: pytest.CaptureFixture[str]) -> None:
    """The terminal says how many things were not priced or not searched (the JSON lists them),
    so "nothing that can be bought" is not read as "everything was tried"."""
    code, out, err = run_argv(["forecast", str(PRETRAIN), "--json"], capsys)
    assert code == 0, err
    notes = json.loads(out)["action_notes"]
    assert notes  # something was not priced or not searched
    code, out, err = run_argv(["forecast", str(PRETRAIN)], capsys)
    assert code == 0, err
    word = "note" if len(notes) == 1 else "notes"
    assert f"({len(notes)} {word} on what was not priced or not searched" in out
