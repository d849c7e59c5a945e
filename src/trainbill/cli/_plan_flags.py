"""The flags that describe a run without a plan file, defined once for every command that
prices a plan (forecast, simulate, optimize, report).

A run described in one line (``--params 70B --tokens 1.4T --gpu h100 --gpus 512``) must mean
the same plan to each command: the flags' names, types and help live here as ``Annotated``
aliases, ``run_flags`` turns their values into plan sections, and ``build_plan`` merges them
over an optional plan file (flags win). Nothing here imports the library's engine, so a
command's start-up pays only for Typer (issue #21).
"""

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trainbill.errors import SpecError

if TYPE_CHECKING:
    from trainbill.spec import Plan

__all__ = [
    "ActiveParams",
    "Architecture",
    "AsOf",
    "AttentionShare",
    "Cloud",
    "Gpu",
    "Gpus",
    "Hours",
    "Instance",
    "Nodes",
    "Params",
    "PlanFile",
    "Precision",
    "Region",
    "RunDate",
    "SavingsPlanCovered",
    "SpotFraction",
    "Tokens",
    "build_plan",
    "check_cluster_flags",
    "parse_date",
    "parse_number",
    "run_flags",
]

PlanFile = Annotated[
    Path | None, typer.Argument(help="Plan TOML file (optional when flags describe the run).")
]
Params = Annotated[str | None, typer.Option("--params", help="Total parameters, e.g. 70e9 or 70B.")]
ActiveParams = Annotated[
    str | None,
    typer.Option("--active-params", help="Active parameters per token (MoE), e.g. 37B."),
]
Tokens = Annotated[
    str | None, typer.Option("--tokens", help="Training tokens, e.g. 1.4e12 or 1.4T.")
]
Gpu = Annotated[
    str | None,
    typer.Option("--gpu", help="Accelerator, e.g. h100 or A100 (picks the provider's instance)."),
]
Gpus = Annotated[int | None, typer.Option("--gpus", help="Accelerator count.")]
Precision = Annotated[
    str | None,
    typer.Option(
        "--precision", help="fp32, tf32, fp16, bf16 or fp8 (each part's peak from the catalog)."
    ),
]
Architecture = Annotated[
    str | None,
    typer.Option(
        "--architecture", help="transformer (default), state-space (Mamba) or hybrid (Jamba-style)."
    ),
]
AttentionShare = Annotated[
    float | None,
    typer.Option(
        "--attention-share", help="hybrid: share of layers that are attention, 0-1 (default 1/8)."
    ),
]
Instance = Annotated[
    str | None, typer.Option("--instance", help="Instance type, e.g. p5.48xlarge.")
]
Nodes = Annotated[int | None, typer.Option("--nodes", help="Instance count.")]
Hours = Annotated[
    float | None,
    typer.Option("--hours", help="Hours of pure training (else derived from the model)."),
]
Cloud = Annotated[str | None, typer.Option("--cloud", help="aws, gcp or azure.")]
Region = Annotated[str | None, typer.Option("--region", help="Region, e.g. us-east-1.")]
SpotFraction = Annotated[
    float | None, typer.Option("--spot-fraction", help="Share of nodes on spot, 0-1.")
]
SavingsPlanCovered = Annotated[
    str | None,
    typer.Option(
        "--savings-plan-covered",
        help=(
            "1yr or 3yr: a commitment your organisation already holds pays for the run at its "
            "rate (not charged its term); --savings-plan buys one for this run."
        ),
    ),
]
AsOf = Annotated[
    str | None, typer.Option("--as-of", help="Use price points in force on YYYY-MM-DD.")
]
RunDate = Annotated[
    str | None,
    typer.Option(
        "--run-date",
        help="Day of the run YYYY-MM-DD: its software maturity (default: --as-of, else today).",
    ),
]


def run_flags(
    *,
    params: str | None = None,
    active_params: str | None = None,
    tokens: str | None = None,
    precision: str | None = None,
    gpu: str | None = None,
    gpus: int | None = None,
    instance: str | None = None,
    nodes: int | None = None,
    hours: float | None = None,
    provider: str | None = None,
    region: str | None = None,
    orchestrator: str | None = None,
    spot_fraction: float | None = None,
    savings_plan: str | None = None,
    savings_plan_kind: str | None = None,
    commitment: str | None = None,
    savings_plan_covered: str | None = None,
    as_of: str | None = None,
    run_date: str | None = None,
    architecture: str | None = None,
    attention_share: float | None = None,
) -> dict[str, dict[str, Any]]:
    """The flags' values as plan sections (``None``: not given, the file's or default value
    stays); numbers and dates parsed here, so a bad one names its flag.

    ``--savings-plan-covered TERM`` is ``--savings-plan TERM --commitment existing``: a term
    already held, charged at its rate on the run's hours only; given with either, it is refused
    (the two say different things about whose commitment it is)."""
    if savings_plan_covered is not None:
        if savings_plan is not None or commitment is not None:
            given = "--savings-plan" if savings_plan is not None else "--commitment"
            msg = (
                f"give --savings-plan-covered (a commitment already held) or {given}, not both "
                f"(got --savings-plan-covered {savings_plan_covered})"
            )
            raise SpecError(msg, source="command line", field="--savings-plan-covered")
        savings_plan, commitment = savings_plan_covered, "existing"
    return {
        "model": {
            "params": parse_number(params, "--params"),
            "active_params": parse_number(active_params, "--active-params"),
            "tokens": parse_number(tokens, "--tokens"),
            "precision": precision,
            "architecture": architecture,
            "attention_share": attention_share,
        },
        "cluster": {
            "gpu": gpu, "gpus": gpus, "instance": instance, "nodes": nodes, "provider": provider,
            "region": region, "orchestrator": orchestrator,
        },
        "run": {"hours": hours, "date": parse_date(run_date, "--run-date")},
        "purchase": {
            "spot_fraction": spot_fraction, "savings_plan": savings_plan,
            "savings_plan_kind": savings_plan_kind, "commitment": commitment,
        },
        "prices": {"as_of": parse_date(as_of, "--as-of")},
    }  # fmt: skip


#: Counts as papers and model cards write them ("7B parameters", "2T tokens", "$1.5M").
_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_number(text: str | None, flag: str) -> float | None:
    if text is None:
        return None
    plain = text.replace("_", "").strip()
    scale = _SUFFIXES.get(plain[-1:].lower(), 1.0)
    try:
        value = float(plain[:-1] if scale != 1.0 else plain) * scale
    except ValueError:
        msg = f"{text!r} is not a number (e.g. 70e9 or 70B; suffixes K, M, B, T)"
        raise SpecError(msg, source="command line", field=flag) from None
    return value


def parse_date(text: str | None, flag: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        msg = f"{text!r} is not a date (YYYY-MM-DD)"
        raise SpecError(msg, source="command line", field=flag) from None


def check_cluster_flags(flags: dict[str, dict[str, Any]]) -> None:
    """--gpus and --nodes together: the plan would price the nodes and silently drop the GPU
    count."""
    cluster = flags.get("cluster", {})
    gpus, nodes = cluster.get("gpus"), cluster.get("nodes")
    if gpus is not None and nodes is not None:
        msg = (
            f"give --gpus (accelerators) or --nodes (instances), not both (got --gpus {gpus} and "
            f"--nodes {nodes})"
        )
        raise SpecError(msg, source="command line", field="--gpus/--nodes")


def build_plan(
    plan_file: Path | None,
    *,
    flags: dict[str, dict[str, Any]],
) -> "Plan":
    """A plan from a file, flags or both; flags override the file's values."""
    from trainbill.spec import load_plan, merge_plan_dicts, plan_from_dict

    overrides = {k: {f: v for f, v in sec.items() if v is not None} for k, sec in flags.items()}
    overrides = {k: v for k, v in overrides.items() if v}
    from trainbill.cli._common import remember_plan_source

    check_cluster_flags(flags)
    remember_plan_source(str(plan_file) if plan_file is not None else "command line")
    if plan_file is None:
        if not overrides:
            msg = (
                "give a plan file or flags (e.g. --params 70e9 --tokens 1.4e12 --gpu h100 "
                "--gpus 512)"
            )
            raise SpecError(msg, source="command line")
        return plan_from_dict(overrides, source="command line")
    base = load_plan(plan_file)
    if not overrides:
        return base
    # Instance and GPU flags replace how the cluster is described in the file.
    merged_cluster = overrides.get("cluster", {})
    base_dict = base.model_dump(exclude_none=True, exclude_defaults=True)
    file_cluster = base_dict.get("cluster", {})
    if "gpu" in merged_cluster and "instance" not in merged_cluster:
        file_cluster.pop("instance", None)
    if "instance" in merged_cluster and "gpu" not in merged_cluster:
        # --instance replaces the file's GPU the same way --gpu replaces its instance.
        file_cluster.pop("gpu", None)
    if "gpus" in merged_cluster:
        base_dict.get("cluster", {}).pop("nodes", None)
    if "nodes" in merged_cluster:
        base_dict.get("cluster", {}).pop("gpus", None)
    return plan_from_dict(merge_plan_dicts(base_dict, overrides), source=f"{plan_file} + flags")
