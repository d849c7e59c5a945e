"""``compare-orchestrators``, ``storage-check``, ``sparse-attention``, ``rule-of-thumb``: the
article's what-ifs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from trainbill.cli import app
from trainbill.cli._common import catalog_from_options, console, print_json, read_plan
from trainbill.cli._import import render_import
from trainbill.usecases.compare import cheapest_priced, compare_orchestrators
from trainbill.usecases.whatif import rule_of_thumb_check, sparse_attention, storage_check

__all__ = ["render_import"]

PlanArg = Annotated[Path, typer.Argument(help="Plan TOML file.")]
CatalogOpt = Annotated[
    list[Path] | None, typer.Option("--catalog", help="Overlay catalog directory (own rates).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _m(x: float) -> str:
    return f"-${-x:,.0f}" if x < 0 else f"${x:,.0f}"


@app.command("compare-orchestrators")
def compare_cmd(
    plan_file: PlanArg,
    catalog_dir: CatalogOpt = None,
    as_json: JsonOpt = False,
    wide: Annotated[
        bool, typer.Option("--wide", help="Show every column, whatever the terminal width.")
    ] = False,
) -> None:
    """The same job on raw EC2, SageMaker HyperPod and EKS + Karpenter (the article's table, computed)."""  # noqa: E501 - Typer lists the first line as written
    catalog = catalog_from_options(catalog_dir)
    rows = compare_orchestrators(read_plan(plan_file), catalog)
    if as_json:
        print_json(
            [
                {
                    "orchestrator": r.orchestrator,
                    "label": r.label,
                    "total_usd": r.total_usd,
                    "orchestration_usd": r.orchestration_usd,
                    "premium_priced": r.premium_priced,
                    "restart_hours": r.restart_hours,
                    "failure_and_reclaim_usd": r.disruption_usd,
                    "wall_hours": r.forecast.usage.wall_hours,
                    "per_100h_usd": r.per_100h_usd,
                    "billing": r.billing,
                    "setup_time": r.setup_time,
                    "failure_risk": r.failure_risk,
                    "article_cost_100h_usd": r.article_cost_100h_usd,
                    "unpriced": list(r.unpriced),
                    "notes": list(r.notes),
                }
                for r in rows
            ]
        )
        return
    from trainbill.cli import _common
    from trainbill.cli._tables import Col, print_table

    cols = [
        Col("approach", kind="text"),
        Col("real bill", "right"),
        Col("orchestration", "right", drop=3),
        Col("restart h", "right", drop=5),
        Col("failures+reclaims", "right", drop=4),
        Col("wall h", "right", drop=2),
        Col("per 100 h", "right", drop=6),
        Col("billed", kind="text", drop=7),
    ]
    table_rows = [
        [
            r.label,
            _m(r.total_usd) + (" (lower bound, not ranked)" if r.unpriced else ""),
            _m(r.orchestration_usd) if r.premium_priced else "NOT PRICED (ml.* premium)",
            f"{r.restart_hours:g}",
            _m(r.disruption_usd),
            f"{r.forecast.usage.wall_hours:,.1f}",
            _m(r.per_100h_usd),
            r.billing,
        ]
        for r in rows
    ]
    print_table(_common.console, "Same job, three orchestrators", cols, table_rows, wide=wide)
    for r in rows:
        for note in r.notes:
            console.print(f"* {r.label}: {escape(note)}")
        for gap in r.unpriced:
            console.print(f"* {r.label}: a lower bound: {escape(gap)}")
    for r in rows:
        console.print(
            f"The article claims for {r.label} (not computed, no figure above uses them): set-up "
            f"{r.setup_time}; risk {r.failure_risk}; {_m(r.article_cost_100h_usd)} per 100 h"
        )
    cheapest = cheapest_priced(rows)
    whole = "" if cheapest is None or len(rows) == 1 else " among the fully priced"
    console.print(
        f"Cheapest{whole} for this job: [bold]{cheapest.label}[/bold]."
        if cheapest is not None
        else "No orchestrator is fully priced: no cheapest."
    )


@app.command("storage-check")
def storage_cmd(
    plan_file: PlanArg, catalog_dir: CatalogOpt = None, as_json: JsonOpt = False
) -> None:
    """Can gp3 feed the data loader and absorb checkpoints? If not, size and price FSx for Lustre."""  # noqa: E501 - Typer lists the first line as written
    rep = storage_check(read_plan(plan_file), catalog_from_options(catalog_dir))
    if as_json:
        d = {k: getattr(rep, k) for k in rep.__dataclass_fields__}
        d["recommendation"] = rep.recommendation
        print_json(d)
        return
    console.print(
        f"Data loader: {rep.tokens_per_s:,.0f} tokens/s → {rep.read_mibps_per_node:,.1f} MiB/s and "
        f"{rep.read_iops_per_node:,.0f} IOPS per node ({rep.io_kib:g} KiB reads)"
    )
    if rep.checkpoint_gb_per_node:
        console.print(
            f"Checkpoints to EBS: {rep.checkpoint_gb_per_node:,.1f} GB per node at "
            f"{rep.checkpoint_write_mibps_per_node:,.0f} MiB/s"
        )
    console.print(
        f"gp3 per-volume limits: {rep.gp3_max_iops:,.0f} IOPS, {rep.gp3_max_mibps:,.0f} MiB/s; "
        f"plan provisions {rep.provisioned_iops:,.0f} IOPS, {rep.provisioned_mibps:,.0f} MiB/s"
    )
    console.print(
        f"FSx for Lustre that would carry {rep.fsx_needed_mbps:,.0f} MB/s: {rep.fsx_tier}, "
        f"{rep.fsx_capacity_gb:,.0f} GB, {_m(rep.fsx_usd)} for the run"
    )
    console.print(f"[bold]{rep.recommendation}[/bold]")
    for n in rep.notes:
        console.print(f"  note: {escape(n)}")


@app.command("sparse-attention")
def sparse_cmd(
    plan_file: PlanArg,
    sparsity: Annotated[
        float, typer.Option("--attention-sparsity", help="Share of attention FLOPs removed, 0-1.")
    ] = 0.5,
    catalog_dir: CatalogOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What skipping a share of attention saves, by sequence length; can the article's 38% hold?"""
    rep = sparse_attention(
        read_plan(plan_file),
        catalog_from_options(catalog_dir),
        sparsity=sparsity,
        source=str(plan_file),
    )
    if as_json:
        d = {k: getattr(rep, k) for k in rep.__dataclass_fields__ if k != "rows"}
        d["rows"] = [
            {
                "seq_len": r.seq_len,
                "attention_share": r.attention_share,
                "flops_saving": r.flops_saving,
                "time_share": r.time_share,
                "time_saving": r.time_saving,
            }
            for r in rep.rows
        ]
        print_json(d)
        return
    t = Table(title=f"Sparse attention at {sparsity:.0%} sparsity")
    for col in ("seq len", "attention share of FLOPs", "of the time", "time saved"):
        t.add_column(col, justify="right")
    for r in rep.rows:
        mark = " (plan)" if r.seq_len == rep.plan_seq_len else ""
        t.add_row(f"{r.seq_len:,}{mark}", f"{r.attention_share:.1%}", f"{r.time_share:.1%}",
                  f"{r.time_saving:.1%}")  # fmt: skip
    console.print(t)
    console.print(
        f"Plan: {rep.hours_before:,.1f} h → {rep.hours_after:,.1f} h, bill {_m(rep.usd_before)} "
        f"→ {_m(rep.usd_after)}"
    )
    if rep.min_seq_len_for_claim is None:
        console.print(
            f"The article's {rep.claimed_saving:.0%} saving is impossible at {sparsity:.0%} "
            f"sparsity (it needs sparsity above {rep.claimed_saving:.0%})"
        )
    else:
        console.print(
            f"The article's {rep.claimed_saving:.0%} saving needs seq len ≥ "
            f"{rep.min_seq_len_for_claim:,} for this model at {sparsity:.0%} sparsity (claimed "
            f"above {rep.claimed_min_seq_len:,})"
        )
    for n in rep.notes:
        console.print(f"  note: {escape(n)}")


@app.command("rule-of-thumb")
def rule_cmd(plan_file: PlanArg, catalog_dir: CatalogOpt = None, as_json: JsonOpt = False) -> None:
    """The article's formula (× 1.3–1.5 × 1.1 if spot) next to the itemized bill, gap by category."""  # noqa: E501 - Typer lists the first line as written
    checked = rule_of_thumb_check(read_plan(plan_file), catalog_from_options(catalog_dir))
    r, b = checked.rule, checked.budget
    if as_json:
        print_json(
            {
                "base_usd": r.base_usd,
                "base_basis": r.base_basis,
                "utilization": [r.utilization_low, r.utilization_high],
                "risk": r.risk,
                "low_usd": r.low_usd,
                "high_usd": r.high_usd,
                "itemized_usd": r.itemized_usd,
                "budget_usd": r.budget_usd,
                "budget_basis": b.basis,
                "verdict": r.verdict,
                "by_category": [
                    {"category": c, "itemized_usd": a, "beyond_base_usd": b}
                    for c, a, b in r.by_category
                ],
            }
        )
        return
    console.print(
        f"Rule of thumb: {r.base_basis} = {_m(r.base_usd)} × "
        f"{r.utilization_low:g}–{r.utilization_high:g} × {r.risk:g} = {_m(r.low_usd)} – "
        f"{_m(r.high_usd)}"
    )
    console.print(
        f"Itemized forecast: {_m(r.itemized_usd)}; budget (P90 of simulated runs): {_m(b.usd)}"
    )
    console.print(f"Verdict: {r.verdict}")
    t = Table(title="Where the itemized bill differs from the rule's base")
    t.add_column("category")
    t.add_column("itemized", justify="right")
    t.add_column("beyond the base", justify="right")
    for c, a, beyond in r.by_category:
        t.add_row(c, _m(a), _m(beyond))
    t.add_row("[bold]total[/bold]", _m(r.itemized_usd), _m(r.itemized_usd - r.base_usd))
    console.print(t)
    console.print(
        f"The rule adds {_m(r.low_usd - r.base_usd)} – {_m(r.high_usd - r.base_usd)} on top of "
        f"the base; the categories above add {_m(r.itemized_usd - r.base_usd)}."
    )
