"""``trainbill optimize --export skypilot``: the best plan as a SkyPilot task YAML
(issue #10 item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import run_argv

#: Every hidden-cost rate zero, 4 × p5.48xlarge for 10 h (as conftest.zero_hidden_plan), no spot
#: reclaims.
_PLAN = """
[run]
name = "zero"
hours = 10

[cluster]
instance = "p5.48xlarge"
nodes = 4

[prices]
as_of = 2025-05-01

[storage]
ebs_gb_per_node = 0
fsx_capacity_gb = 0

[data]
dataset_gb = 0

[network]
nat_gateways = 0
public_ips_per_node = 0
nat_gb_per_node_hour = 0

[monitoring]
custom_metrics_per_node = 0
logs_gb_per_node_hour = 0

[reliability]
gpu_failure_rate_per_gpu_day = 0
straggler_cv = 0
spot_reclaim_rate_per_node_hour = 0
"""

#: p5.48xlarge at 4 or 8 nodes with a 6 h deadline: 4 nodes take 10 h (too slow); 8 nodes take
#: 10 × 4/8 = 5 h. So the best plan has 8 nodes of 8 H100 each.
_SEARCH = [
    "--clouds",
    "aws",
    "--instances",
    "p5.48xlarge",
    "--nodes",
    "4,8",
    "--deadline-hours",
    "6",
]


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    """The zero-hidden-cost plan as a TOML file."""
    path = tmp_path / "plan.toml"
    path.write_text(_PLAN, encoding="utf-8")
    return path


def _check_task(task: dict[str, object]) -> None:
    """8 nodes of p5.48xlarge (8 × H100) on AWS; all on spot, since with no reclaims spot is just
    cheaper."""
    assert task["name"] == "zero"
    assert task["num_nodes"] == 8
    resources = task["resources"]
    assert isinstance(resources, dict)
    assert resources["cloud"] == "aws"
    assert resources["instance_type"] == "p5.48xlarge"
    assert resources["accelerators"] == "H100:8"
    assert resources["use_spot"] is True


def test_export_prints_the_task_instead_of_tables(
    capsys: pytest.CaptureFixture[str], plan_file: Path
) -> None:
    """Without --export-file the YAML alone goes to stdout (pipeable into a file), with its comment
    header."""
    code, out, err = run_argv(
        ["optimize", str(plan_file), *_SEARCH, "--export", "skypilot"], capsys
    )
    assert code == 0, err
    assert out.startswith("# Exported by trainbill")
    assert "Pareto" not in out
    _check_task(yaml.safe_load(out))


def test_export_file_is_written_and_never_overwritten(
    capsys: pytest.CaptureFixture[str], plan_file: Path
) -> None:
    """--export-file writes atomically next to --json output; a second run needs --force and keeps
    the file."""
    task_file = plan_file.parent / "task.yaml"
    args = [
        "optimize",
        str(plan_file),
        *_SEARCH,
        "--json",
        "--export",
        "skypilot",
        "--export-file",
        str(task_file),
    ]
    code, out, err = run_argv(args, capsys)
    assert code == 0, err
    assert json.loads(out)["best"]["nodes"] == 8
    _check_task(yaml.safe_load(task_file.read_text(encoding="utf-8")))
    task_file.write_text("mine", encoding="utf-8")
    code, _, err = run_argv(args, capsys)
    assert code == 1
    assert "--force" in err
    assert task_file.read_text(encoding="utf-8") == "mine"
    code, _, err = run_argv([*args, "--force"], capsys)
    assert code == 0, err
    _check_task(yaml.safe_load(task_file.read_text(encoding="utf-8")))
    assert sorted(p.name for p in plan_file.parent.iterdir()) == [
        "plan.toml",
        "task.yaml",
    ]  # no temp file left


@pytest.mark.parametrize(
    ("flags", "text"),
    [
        (["--export", "terraform"], "allowed values: skypilot"),
        (["--export-file", "t.yaml"], "--export-file needs --export"),
        (["--export", "skypilot", "--json"], "give --export-file"),
        (["--export", "skypilot", "--export-file", "same.toml", "-o", "same.toml"], "same file"),
    ],
)
def test_export_flag_errors_are_one_line(
    capsys: pytest.CaptureFixture[str],
    plan_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    text: str,
) -> None:
    """Unknown format, a file without --export, stdout clash with --json, one path twice: exit 1,
    nothing written."""
    monkeypatch.chdir(plan_file.parent)
    code, out, err = run_argv(["optimize", str(plan_file), *_SEARCH, *flags], capsys)
    assert code == 1
    assert err.startswith("trainbill: error:")
    assert text in err
    assert out == ""
    assert [p.name for p in plan_file.parent.iterdir()] == ["plan.toml"]
