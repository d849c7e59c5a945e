"""A run described by flags (``--params 70B --gpu h100 --gpus 512``), as a typed record, and the
plan it makes over an optional plan file.

Why a record: the flags used to travel as ``dict[str, dict[str, Any]]`` (``"cluster" ->
{"nodes": …}``) from the CLI to the plan, so no type checker could follow ``--nodes`` to
``ClusterSection.nodes``. ``RunFlags`` names each flag's value once, typed; ``sections`` is
the one place a flag is mapped to its plan field; ``plan_from_flags`` merges them over a plan
file by the rules every command shares (flags win; ``--gpu`` replaces the file's instance,
``--gpus`` its node count, and the other way round). The front end parses text (numbers with
suffixes, dates) and names its flags in errors; nothing here reads the command line.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from trainbill._record import record
from trainbill.errors import SpecError
from trainbill.spec.sections import Plan
from trainbill.spec.text import load_plan, merge_plan_dicts, plan_from_dict

__all__ = ["RunFlags", "given_sections", "plan_from_flags"]

#: Where errors about the flags say they came from.
_COMMAND_LINE = "command line"


@record
class RunFlags:
    """The run flags' values, already parsed (``None``: not given, the file's or the default
    value stays).

    ``savings_plan_covered`` (``--savings-plan-covered TERM``) is ``savings_plan=TERM`` with
    ``commitment="existing"``: a term already held, charged at its rate on the run's hours
    only; given with either of those it is refused here, when the flags are built, as the two
    say different things about whose commitment it is.
    """

    params: float | None = None
    active_params: float | None = None
    tokens: float | None = None
    precision: str | None = None
    architecture: str | None = None
    attention_share: float | None = None
    gpu: str | None = None
    gpus: int | None = None
    instance: str | None = None
    nodes: int | None = None
    provider: str | None = None
    region: str | None = None
    orchestrator: str | None = None
    hours: float | None = None
    run_date: date | None = None
    spot_fraction: float | None = None
    savings_plan: str | None = None
    savings_plan_kind: str | None = None
    commitment: str | None = None
    savings_plan_covered: str | None = None
    as_of: date | None = None

    def __post_init__(self) -> None:
        covered = self.savings_plan_covered
        if covered is not None and (self.savings_plan is not None or self.commitment is not None):
            given = "--savings-plan" if self.savings_plan is not None else "--commitment"
            msg = (
                f"give --savings-plan-covered (a commitment already held) or {given}, not both "
                f"(got --savings-plan-covered {covered})"
            )
            raise SpecError(msg, source=_COMMAND_LINE, field="--savings-plan-covered")

    def sections(self) -> dict[str, dict[str, Any]]:
        """The flags as plan sections, every field present (``None`` where not given): the one
        place a flag is mapped to the plan field it sets."""
        covered = self.savings_plan_covered
        savings_plan = covered if covered is not None else self.savings_plan
        commitment = "existing" if covered is not None else self.commitment
        return {
            "model": {
                "params": self.params, "active_params": self.active_params,
                "tokens": self.tokens, "precision": self.precision,
                "architecture": self.architecture, "attention_share": self.attention_share,
            },
            "cluster": {
                "gpu": self.gpu, "gpus": self.gpus, "instance": self.instance,
                "nodes": self.nodes, "provider": self.provider, "region": self.region,
                "orchestrator": self.orchestrator,
            },
            "run": {"hours": self.hours, "date": self.run_date},
            "purchase": {
                "spot_fraction": self.spot_fraction, "savings_plan": savings_plan,
                "savings_plan_kind": self.savings_plan_kind, "commitment": commitment,
            },
            "prices": {"as_of": self.as_of},
        }  # fmt: skip

    def check_cluster(self) -> None:
        """Refuse ``--gpus`` with ``--nodes``: the plan would price the nodes and silently drop
        the GPU count."""
        _check_cluster(self.sections())


def _check_cluster(sections: Mapping[str, Mapping[str, Any]]) -> None:
    cluster = sections.get("cluster", {})
    gpus, nodes = cluster.get("gpus"), cluster.get("nodes")
    if gpus is not None and nodes is not None:
        msg = (
            f"give --gpus (accelerators) or --nodes (instances), not both (got --gpus {gpus} and "
            f"--nodes {nodes})"
        )
        raise SpecError(msg, source=_COMMAND_LINE, field="--gpus/--nodes")


def given_sections(
    flags: RunFlags | Mapping[str, Mapping[str, Any]],
) -> dict[str, dict[str, Any]]:
    """Only what was given: each section's fields without ``None``, and no empty section, so
    the file's (or an imported cluster's) values stay where a flag was not given."""
    sections = flags.sections() if isinstance(flags, RunFlags) else flags
    kept = {k: {f: v for f, v in sec.items() if v is not None} for k, sec in sections.items()}
    return {k: v for k, v in kept.items() if v}


def plan_from_flags(
    plan_file: Path | None,
    *,
    flags: RunFlags | Mapping[str, Mapping[str, Any]],
) -> Plan:
    """A plan from a file, flags or both; the flags' values override the file's.

    ``flags`` is a ``RunFlags``, or plan sections as a mapping (``trainbill diff --set``
    values, and callers that built the sections themselves before ``RunFlags`` existed).

    Raises:
        SpecError: neither a file nor a flag, ``--gpus`` with ``--nodes``, or the merged plan
            is invalid (naming the file, or the command line, and the field).
    """
    sections = flags.sections() if isinstance(flags, RunFlags) else flags
    overrides = given_sections(flags)
    _check_cluster(sections)
    if plan_file is None:
        if not overrides:
            msg = (
                "give a plan file or flags (e.g. --params 70e9 --tokens 1.4e12 --gpu h100 "
                "--gpus 512)"
            )
            raise SpecError(msg, source=_COMMAND_LINE)
        return plan_from_dict(overrides, source=_COMMAND_LINE)
    base = load_plan(plan_file)
    if not overrides:
        return base
    base_dict = base.model_dump(exclude_none=True, exclude_defaults=True)
    _drop_replaced_cluster(base_dict, overrides.get("cluster", {}))
    return plan_from_dict(merge_plan_dicts(base_dict, overrides), source=f"{plan_file} + flags")


def _drop_replaced_cluster(base: dict[str, Any], given: Mapping[str, Any]) -> None:
    """Remove from the file's cluster what the flags describe another way: ``--gpu`` replaces
    the file's instance (and ``--instance`` its GPU) unless both are given; ``--gpus`` replaces
    its node count, ``--nodes`` its GPU count."""
    cluster = base.get("cluster", {})
    if "gpu" in given and "instance" not in given:
        cluster.pop("instance", None)
    if "instance" in given and "gpu" not in given:
        cluster.pop("gpu", None)
    if "gpus" in given:
        cluster.pop("nodes", None)
    if "nodes" in given:
        cluster.pop("gpus", None)
