"""A run described in one line means the same plan to every command that prices one.

``forecast``, ``simulate``, ``optimize`` and ``report`` take the same run flags
(``trainbill.cli._plan_flags``). Each command is run twice here, on the flags and on a plan file
written in the test with the same values, and must give the same answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import refused, run_argv

#: --params 7B --tokens 200B --gpu h100 --gpus 16, as flags and as the plan file they describe
#: (7B = 7 × 1e9, 200B = 200 × 1e9).
FLAGS = ["--params", "7B", "--tokens", "200B", "--gpu", "h100", "--gpus", "16"]
PLAN = """
[model]
params = 7e9
tokens = 2e11
[cluster]
gpu = "h100"
gpus = 16
"""


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    p = tmp_path / "plan.toml"
    p.write_text(PLAN, encoding="utf-8")
    return p


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code, out, err = run_argv(argv, capsys)
    assert code == 0, err
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def test_simulate_flags_are_the_plan(plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tail = ["--trials", "2000", "--seed", "7", "--study-trials", "0", "--json"]
    by_flags = _json(["simulate", *FLAGS, *tail], capsys)
    by_file = _json(["simulate", str(plan_file), *tail], capsys)
    by_flags.pop("elapsed_s", None)
    by_file.pop("elapsed_s", None)
    assert by_flags == by_file


def test_optimize_flags_are_the_plan(plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tail = ["--deadline-hours", "2000", "--json"]
    by_flags = _json(["optimize", *FLAGS, *tail], capsys)
    by_file = _json(["optimize", str(plan_file), *tail], capsys)
    for d in (by_flags, by_file):
        d.pop("elapsed_s")  # the search's own run time
    assert by_flags == by_file


def test_report_from_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report of the flags' plan shows the forecast's total for the same flags."""
    out = tmp_path / "r.html"
    code, _, err = run_argv(["report", *FLAGS, "-o", str(out), "--trials", "0"], capsys)
    assert code == 0, err
    total = _json(["forecast", *FLAGS, "--json"], capsys)["total_usd"]
    assert isinstance(total, float)
    assert f"${total:,.0f}" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["simulate", "optimize"])
def test_no_plan_and_no_flags_is_one_line(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    refused([command], capsys, "give a plan file or flags")


def test_gpus_and_nodes_together_name_both(capsys: pytest.CaptureFixture[str]) -> None:
    refused(["simulate", *FLAGS, "--nodes", "4"], capsys, "give --gpus (accelerators) or --nodes")
