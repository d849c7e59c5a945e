"""The flags that describe a run without a plan file, defined once for every command that
prices a plan (forecast, simulate, optimize, report).

A run described in one line (``--params 70B --tokens 1.4T --gpu h100 --gpus 512``) must mean
the same plan to each command: the flags' names, types and help live here as ``Annotated``
aliases, ``run_flags`` turns their values into plan sections, and ``build_plan`` merges them
over an optional plan file (flags win). Nothing here imports the library's engine, so a
command's start-up pays only for Typer (issue #21).
"""

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trainbill.errors import SpecError

if TYPE_CHECKING:
    from trainbill.spec import Plan, RunFlags

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
) -> "RunFlags":
    """The flags' values as a typed ``spec.RunFlags`` (``None``: not given, the file's or
    default value stays); numbers and dates parsed here, so a bad one names its flag. The
    record, not an untyped dict, travels to the plan: ``RunFlags.sections`` is the one place a
    flag is mapped to its plan field (and ``--savings-plan-covered`` to its two fields)."""
    from trainbill.spec import RunFlags

    return RunFlags(
        params=parse_number(params, "--params"),
        active_params=parse_number(active_params, "--active-params"),
        tokens=parse_number(tokens, "--tokens"),
        precision=precision, architecture=architecture, attention_share=attention_share,
        gpu=gpu, gpus=gpus, instance=instance, nodes=nodes, provider=provider, region=region,
        orchestrator=orchestrator, hours=hours, run_date=parse_date(run_date, "--run-date"),
        spot_fraction=spot_fraction, savings_plan=savings_plan,
        savings_plan_kind=savings_plan_kind, commitment=commitment,
        savings_plan_covered=savings_plan_covered, as_of=parse_date(as_of, "--as-of"),
    )  # fmt: skip


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


def check_cluster_flags(flags: "RunFlags") -> None:
    """--gpus and --nodes together: the plan would price the nodes and silently drop the GPU
    count (``RunFlags.check_cluster``)."""
    flags.check_cluster()


def build_plan(
    plan_file: Path | None,
    *,
    flags: "RunFlags | Mapping[str, Mapping[str, Any]]",
) -> "Plan":
    """A plan from a file, flags or both; flags override the file's values
    (``spec.plan_from_flags``, which also takes ``diff --set``'s sections)."""
    from trainbill.cli._common import remember_plan_source
    from trainbill.spec import plan_from_flags

    remember_plan_source(str(plan_file) if plan_file is not None else "command line")
    return plan_from_flags(plan_file, flags=flags)
