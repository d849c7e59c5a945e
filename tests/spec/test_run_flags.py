"""The run flags as a typed record (``spec.RunFlags``) and the plan they make over a plan file
(``spec.plan_from_flags``): each flag lands on its plan field, the merge rules are the CLI's,
and the record gives the very plan the CLI's flag dictionary gives (issue #40 item 3)."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from conftest import SEED
from trainbill.cli._plan_flags import build_plan, run_flags
from trainbill.errors import SpecError
from trainbill.spec import RunFlags, plan_from_flags


def test_each_flag_sets_its_plan_field() -> None:
    """A run described only by flags: 70e9 parameters, 1.4e12 tokens, 512 H100s, a 2025 price
    date; the plan holds each value in the field the flag names."""
    plan = plan_from_flags(
        None,
        flags=RunFlags(params=70e9, tokens=1.4e12, gpu="h100", gpus=512, as_of=date(2025, 5, 1)),
    )
    assert (plan.model.params, plan.model.tokens) == (70e9, 1.4e12)
    assert (plan.cluster.gpu, plan.cluster.gpus, plan.cluster.nodes) == ("h100", 512, None)
    assert plan.prices.as_of == date(2025, 5, 1)


def test_flags_override_the_file_and_replace_its_cluster_description() -> None:
    """The seed file says 32 × p5.48xlarge at spot share 0.5 for 72 h. ``--gpu a100 --gpus 64``
    replaces its instance and node count (the GPU and GPU count describe the cluster
    instead); ``--hours 10`` replaces its hours; what no flag names (spot share) stays."""
    plan = plan_from_flags(SEED, flags=RunFlags(gpu="a100", gpus=64, hours=10.0))
    assert (plan.cluster.instance, plan.cluster.nodes) == (None, None)
    assert (plan.cluster.gpu, plan.cluster.gpus) == ("a100", 64)
    assert plan.run.hours == 10.0
    assert plan.purchase.spot_fraction == 0.5


def test_a_covered_savings_plan_is_an_existing_commitment() -> None:
    """``--savings-plan-covered 3yr`` means the 3-year term, already held."""
    sections = RunFlags(savings_plan_covered="3yr").sections()
    assert sections["purchase"]["savings_plan"] == "3yr"
    assert sections["purchase"]["commitment"] == "existing"


@pytest.mark.parametrize("other", [{"savings_plan": "1yr"}, {"commitment": "buy"}])
def test_a_covered_savings_plan_with_another_is_refused(other: dict[str, Any]) -> None:
    with pytest.raises(SpecError, match="not both") as exc:
        RunFlags(savings_plan_covered="3yr", **other)
    assert exc.value.field == "--savings-plan-covered"


def test_gpus_with_nodes_is_refused() -> None:
    """Both counts: the plan would price the nodes and drop the GPU count silently."""
    with pytest.raises(SpecError, match="not both") as exc:
        plan_from_flags(SEED, flags=RunFlags(gpus=16, nodes=2))
    assert exc.value.field == "--gpus/--nodes"


def test_no_file_and_no_flag_is_refused() -> None:
    with pytest.raises(SpecError, match="give a plan file or flags"):
        plan_from_flags(None, flags=RunFlags())


def test_plan_sections_as_a_mapping_are_still_read() -> None:
    """``trainbill diff --set section.field=value`` builds plan sections itself."""
    plan = plan_from_flags(SEED, flags={"checkpoint": {"interval_hours": 2.0}})
    assert plan.checkpoint.interval_hours == 2.0


@pytest.mark.parametrize(
    "given",
    [
        {"nodes": 8, "spot_fraction": 0.25},
        {"gpu": "h100", "gpus": 1024, "as_of": "2026-01-01"},
        {"instance": "p4d.24xlarge", "run_date": "2026-06-01", "savings_plan_covered": "1yr"},
        {"params": "8B", "tokens": "15T", "precision": "fp8", "hours": None},
    ],
)
def test_the_record_makes_the_plan_the_cli_flags_make(given: dict[str, Any]) -> None:
    """The same values through the CLI's ``run_flags`` dictionary and through ``RunFlags``
    (numbers and dates parsed by hand here) give equal plans over the seed file."""
    typed: dict[str, Any] = {}
    for key, value in given.items():
        if key in ("as_of", "run_date"):
            typed[key] = date.fromisoformat(value)
        elif key == "params":
            typed[key] = 8e9  # "8B"
        elif key == "tokens":
            typed[key] = 15e12  # "15T"
        else:
            typed[key] = value
    assert plan_from_flags(SEED, flags=RunFlags(**typed)) == build_plan(
        SEED, flags=run_flags(**given)
    )
