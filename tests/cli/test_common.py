"""Helpers shared by the command modules (``trainbill.cli._common``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import EXAMPLES, refused


def test_finite_option_helper() -> None:
    """The shared check behind --deadline-hours/--budget-usd: finite and > 0, else SpecError."""
    from trainbill.cli._common import finite_option
    from trainbill.errors import SpecError

    assert finite_option(None, "--x") is None
    assert finite_option(2.5, "--x") == 2.5
    for bad in (math.nan, math.inf, -math.inf, 0.0, -1.0):
        with pytest.raises(SpecError, match="--x"):
            finite_option(bad, "--x")


@pytest.mark.parametrize(
    "command",
    [
        ["forecast"],
        ["simulate", "--trials", "10"],
        ["optimize"],
        ["storage-check"],
        ["rule-of-thumb"],
        ["compare-orchestrators"],
        ["sparse-attention"],
    ],
)
def test_a_rule_about_a_plan_field_names_the_plan_file(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: only forecast and diff named the file when a rule that needs the catalog refused a
    plan field (here 1,907 MiB/s on a 3,000-IOPS gp3 volume, which allows at most 3,000 × 0.25
    = 750); storage-check, simulate, optimize and the other what-ifs said only the field."""
    plan = tmp_path / "pt.toml"
    text = (EXAMPLES / "pretrain-512-h100.toml").read_text(encoding="utf-8")
    plan.write_text(
        text.replace(
            "ebs_gb_per_node = 2000", "ebs_gb_per_node = 2000\nebs_throughput_mibps = 1907"
        ),
        encoding="utf-8",
    )
    refused(
        [command[0], str(plan), *command[1:]],
        capsys,
        f"{plan}: storage.ebs_throughput_mibps: 1,907 MiB/s",
        "125 to 750",
    )
