"""What the planner returns: candidates, their caveats, the Pareto front, right-sizing and the
infeasibility message, all worked out from evaluated grids (``grid._Block``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field
from datetime import date
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog, Instance
from trainbill.costs import price_arrays
from trainbill.errors import InfeasibleError
from trainbill.optimize.grid import P90_Z, FloatArray, _Block, _fits, _wall_sd, _with_p90
from trainbill.optimize.space import _SpOption, _stand_in_reason
from trainbill.spec import Plan
from trainbill.usage import usage_for

#: What a recommendation changes that the price alone does not show (see ``Caveat``).
CaveatKind = Literal[
    "stand_in",
    "porting",
    "cloud",
    "orchestrator",
    "older_gpu",
    "memory",
    "spot_capacity",
    "reference_region",
    "deadline_risk",
]


@record
class Caveat:
    """Why a recommendation may not be a drop-in swap for the user's plan, in one sentence.

    ``kind``: ``stand_in`` (a catalog stand-in, not something a cloud sells), ``porting`` (another
    accelerator vendor: the code must be ported), ``cloud`` (another cloud: account, quotas,
    data), ``orchestrator`` (another orchestrator on the same cloud: another service to set up,
    its own quotas and commitments), ``older_gpu`` (an accelerator launched before the plan's),
    ``memory`` (less HBM per accelerator: the parallel layout must be re-tuned),
    ``spot_capacity`` (more nodes on spot than the plan: capacity at that size is not
    guaranteed), ``reference_region`` (its instance has no price point in its region: priced at
    the provider's reference region's),
    ``deadline_risk`` (meets the deadline on the expected wall-clock, not at its P90).
    """

    kind: CaveatKind
    text: str

    def as_dict(self) -> dict[str, str]:
        """JSON-ready fields."""
        return {"kind": self.kind, "text": self.text}


@record
class Candidate:
    """One evaluated configuration (the JSON ``best`` and ``pareto[]`` entries).

    ``caveats`` say what the configuration changes against the user's plan beyond its price
    (empty for the plan itself unless it is a stand-in).
    """

    provider: str
    region: str
    instance: str
    accelerator: str
    nodes: int
    gpus: int
    orchestrator: str
    spot_fraction: float
    savings_plan: str
    savings_plan_coverage: float
    checkpoint_interval_hours: float
    total_usd: float
    wall_hours: float
    p90_usd: float
    p90_wall_hours: float
    is_user_plan: bool = False
    caveats: tuple[Caveat, ...] = ()
    #: The AWS Savings Plan kind searched ("compute", "ec2-instance"); "" = the plan's own.
    savings_plan_kind: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "instance": self.instance,
            "nodes": self.nodes,
            "spot_fraction": self.spot_fraction,
            "savings_plan": self.savings_plan,
            "savings_plan_coverage": self.savings_plan_coverage,
            "savings_plan_kind": self.savings_plan_kind,
            "total_usd": self.total_usd,
            "wall_hours": self.wall_hours,
            # A quick normal approximation (expected + 1.28 sd of the interruption hours), not
            # the budget's P90 of simulated runs: named apart so one plan has one "P90"
            # across report, calculator and JSON (issue #42).
            "bad_case_usd": self.p90_usd,
            "bad_case_wall_hours": self.p90_wall_hours,
            "provider": self.provider,
            "region": self.region,
            "accelerator": self.accelerator,
            "gpus": self.gpus,
            "orchestrator": self.orchestrator,
            "checkpoint_interval_hours": self.checkpoint_interval_hours,
            "is_user_plan": self.is_user_plan,
            "caveats": [c.as_dict() for c in self.caveats],
        }


@record
class RightSizeRow:
    """The best configuration's instance and purchase mix at one node count.

    ``efficiency`` is the fewest node-hours of any row over node-hours at this count: 1.0 at
    the size that needs the fewest node-hours, below 1 by the share of node-hours this size
    spends on top of it. (Against the smallest count it exceeded 1 wherever a larger cluster
    needs fewer node-hours: fewer checkpoints in a shorter run, activation recompute or offload
    no longer needed, a better layout.) ``pays`` is False once adding nodes raises cost × time:
    past that point more GPUs cost more, relatively, than the time they save.
    """

    nodes: int
    gpus: int
    wall_hours: float
    efficiency: float
    total_usd: float
    usd_per_hour_saved: float | None
    pays: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "nodes": self.nodes,
            "gpus": self.gpus,
            "wall_hours": self.wall_hours,
            "efficiency": self.efficiency,
            "total_usd": self.total_usd,
            "usd_per_hour_saved": self.usd_per_hour_saved,
            "pays": self.pays,
        }


@record
class OptimizationResult:
    """The best plan, the cost/time Pareto front, a right-sizing table and search statistics."""

    best: Candidate
    best_plan: Plan
    #: The user's own plan, priced the same way; None when it does not fit in memory (the
    #: search still looks for a cluster that does; ``skipped`` says why).
    user: Candidate | None
    pareto: tuple[Candidate, ...]
    rightsizing: tuple[RightSizeRow, ...]
    evaluated: int
    feasible: int
    elapsed_s: float
    objective: str
    deadline_hours: float | None
    budget_usd: float | None
    skipped: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """The JSON contract of ``trainbill optimize --json``."""
        return {
            "best": self.best.as_dict(),
            "user": self.user.as_dict() if self.user is not None else None,
            "pareto": [c.as_dict() for c in self.pareto],
            "rightsizing": [r.as_dict() for r in self.rightsizing],
            "evaluated": self.evaluated,
            "feasible": self.feasible,
            "elapsed_s": self.elapsed_s,
            "objective": self.objective,
            "deadline_hours": self.deadline_hours,
            "budget_usd": self.budget_usd,
            "skipped": list(self.skipped),
        }


#: What moving the code to another accelerator vendor takes, by the vendor moved to.
_PORTING = {
    "google": "porting to TPU: the training code must run on JAX or PyTorch/XLA; CUDA kernels "
    "(FlashAttention, fused optimizers) and NCCL do not carry over",
    "aws": "porting to AWS Trainium: the training code must run on the Neuron SDK (PyTorch "
    "NeuronX or JAX); CUDA kernels do not carry over",
    "amd": "porting to AMD ROCm: PyTorch runs, but custom CUDA kernels need HIP ports and NCCL "
    "becomes RCCL",
    "nvidia": "porting to NVIDIA CUDA: the training code must leave its current accelerator's "
    "toolchain",
}


#: What moving a run to each orchestrator changes besides its price (the ``orchestrator``
#: caveat), as the ``cloud`` caveat says for a move between clouds.
_ORCHESTRATOR_SWITCH = {
    "hyperpod": (
        "a SageMaker HyperPod cluster (CreateCluster with lifecycle scripts, SageMaker ml.* "
        "instance quotas, not EC2's), billed as SageMaker ml.* usage: an EC2 Instance or Compute "
        "Savings Plan does not cover it (a SageMaker Savings Plan does), and Spot only from "
        "HyperPod's Spot support on"
    ),
    "eks": (
        "an EKS cluster with Karpenter node pools and a job operator to set up and keep "
        "upgraded (EKS control-plane hours, Kubernetes version support windows)"
    ),
    "ec2": (
        "self-managed instances: detecting a failed node, replacing it and restarting the job "
        "are the team's own work (no managed recovery)"
    ),
}


def _orchestrator_caveat(c: Candidate, user_inst: Instance, mine: str | None) -> Caveat | None:
    """The ``orchestrator`` caveat of a candidate on the plan's cloud under another service."""
    if mine is None or c.provider != user_inst.provider or c.orchestrator == mine:
        return None
    what = _ORCHESTRATOR_SWITCH.get(c.orchestrator)
    if what is None:
        return None
    return Caveat(
        kind="orchestrator", text=f"moves the run from {mine} to {c.orchestrator}: {what}"
    )


def _caveats(
    c: Candidate,
    user_inst: Instance,
    user_spot_nodes: float,
    catalog: Catalog,
    as_of: date,
    deadline: float | None = None,
    user_orchestrator: str | None = None,
    memo: dict[tuple[str, str, str, str], tuple[list[Caveat], list[Caveat]]] | None = None,
) -> tuple[Caveat, ...]:
    """What ``c`` changes against the user's plan beyond its price, and what its price or
    deadline rests on (see ``Caveat``). ``memo``: the caveats of its cluster (instance,
    region, cloud, orchestrator), kept across the candidates of one result (a node sweep's
    front shows hundreds of one instance)."""
    cluster = (c.instance, c.region, c.provider, c.orchestrator)
    known = memo.get(cluster) if memo is not None else None
    if known is None:
        known = _cluster_caveats(c, user_inst, catalog, as_of, user_orchestrator)
        if memo is not None:
            memo[cluster] = known
    before, after = known
    out = list(before)
    spot_nodes = c.spot_fraction * c.nodes
    if spot_nodes > user_spot_nodes:
        row = catalog.spot_row(c.instance, provider=c.provider, region=c.region, as_of=as_of)
        seen = (
            f"Spot Advisor: {row.interruption_bucket} of these instances interrupted per month "
            f"in {c.region} (observed {row.observed})"
            if row is not None
            else f"no spot interruption data for {c.instance} in {c.region}"
        )
        text = (
            f"{spot_nodes:g} of {c.nodes} nodes on spot (the plan: {user_spot_nodes:g}): "
            f"{c.provider} does not guarantee spot capacity, and {spot_nodes:g} × {c.instance} "
            f"at once may not be available; {seen}"
        )
        out.append(Caveat(kind="spot_capacity", text=text))
    out.extend(after)
    if deadline is not None and c.wall_hours > deadline:  # the plan as written, say
        text = (
            f"misses the {deadline:g} h deadline on its expected wall-clock ({c.wall_hours:,.1f} h)"
        )
        out.append(Caveat(kind="deadline_risk", text=text))
    elif deadline is not None and c.p90_wall_hours > deadline >= c.wall_hours:
        text = (
            f"meets the {deadline:g} h deadline on its expected {c.wall_hours:,.1f} h, not at "
            f"its P90 ({c.p90_wall_hours:,.1f} h): failures and reclaims can make it miss; "
            "search on the P90 (--p90) to bound it"
        )
        out.append(Caveat(kind="deadline_risk", text=text))
    return tuple(out)


def _cluster_caveats(
    c: Candidate,
    user_inst: Instance,
    catalog: Catalog,
    as_of: date,
    user_orchestrator: str | None,
) -> tuple[list[Caveat], list[Caveat]]:
    """The caveats of ``c`` that depend only on its instance, region, cloud and orchestrator:
    (those listed before the spot-capacity one, those after it)."""
    inst = catalog.instance(c.instance)
    acc: Accelerator = catalog.accelerator(c.accelerator)
    mine: Accelerator = catalog.accelerator(user_inst.accelerator)
    out: list[Caveat] = []
    why = _stand_in_reason(inst, catalog, c.region, as_of)
    if why is not None:
        out.append(Caveat(kind="stand_in", text=f"{c.instance}: {why}"))
    if acc.vendor != mine.vendor:
        hint = _PORTING.get(acc.vendor, f"porting from {mine.vendor} to {acc.vendor}")
        out.append(Caveat(kind="porting", text=f"{acc.name} instead of {mine.name}: {hint}"))
    if c.provider != user_inst.provider:
        text = (
            f"moves the run from {user_inst.provider} to {c.provider}: another account, quotas "
            "and capacity requests there, and the training data and checkpoints copied across "
            "clouds"
        )
        out.append(Caveat(kind="cloud", text=text))
    switched = _orchestrator_caveat(c, user_inst, user_orchestrator)
    if switched is not None:
        out.append(switched)
    if acc.launched is not None and mine.launched is not None and acc.launched < mine.launched:
        no_fp8 = (
            "" if acc.peak_fp8_tflops is not None or mine.peak_fp8_tflops is None else ", no FP8"
        )
        text = (
            f"{acc.name} (launched {acc.launched}) is an older generation than {mine.name} "
            f"({mine.launched}): dense BF16 peak {acc.peak_bf16_tflops:g} vs "
            f"{mine.peak_bf16_tflops:g} TFLOP/s{no_fp8}"
        )
        out.append(Caveat(kind="older_gpu", text=text))
    if acc.hbm_gb < mine.hbm_gb:
        text = (
            f"{acc.hbm_gb:g} GB of memory per accelerator vs {mine.hbm_gb:g} GB: the parallel "
            "layout (tensor/pipeline split, micro-batch, activation recompute) must be re-tuned "
            "to fit"
        )
        out.append(Caveat(kind="memory", text=text))
    after: list[Caveat] = []
    rate = catalog.find_price(
        c.instance, "on_demand", provider=c.provider, region=c.region, as_of=as_of
    )
    if rate is not None and rate.region != c.region:
        text = (
            f"no {c.instance} price point for {c.region} in the catalog: priced at "
            f"{rate.region}'s ({c.provider}'s reference region); prices differ by region"
        )
        after.append(Caveat(kind="reference_region", text=text))
    return out, after


def _candidate(block: _Block, flat: int) -> Candidate:
    """One configuration of ``block`` (its flat index) as a ``Candidate``."""
    return _candidates(block, [flat])[0]


def _candidates(block: _Block, flats: Sequence[int]) -> list[Candidate]:
    """``_candidate`` of each flat index (the block's axes and figures read once)."""
    a = block.axes
    inst = block.inst
    index = np.unravel_index(np.asarray(flats, dtype=np.intp).reshape(-1), block.shape)
    n_i, o_i, i_i, s_i, k_i = (x.tolist() for x in index)
    out = []
    for j, (total, wall, p90, p90_wall) in enumerate(block.points(flats)):
        nodes = a.nodes[n_i[j]]
        option = a.sp[k_i[j]]
        out.append(
            Candidate(
                provider=inst.provider,
                region=block.region,
                instance=inst.instance,
                accelerator=inst.accelerator,
                nodes=nodes,
                gpus=nodes * inst.accelerator_count,
                orchestrator=a.orchestrators[o_i[j]],
                spot_fraction=a.spots[s_i[j]],
                savings_plan=option.term,
                savings_plan_coverage=option.coverage,
                savings_plan_kind=option.kind,
                checkpoint_interval_hours=a.intervals[i_i[j]],
                total_usd=total,
                wall_hours=wall,
                p90_usd=p90,
                p90_wall_hours=p90_wall,
            )
        )
    return out


def _pareto_indices(cost: FloatArray, wall: FloatArray) -> npt.NDArray[np.intp]:
    """Indices of the cost/time Pareto front (no other point is both cheaper and faster)."""
    if cost.size == 0:
        return np.zeros(0, dtype=np.intp)
    order = np.lexsort((cost, wall))
    c = cost[order]
    best_before = np.minimum.accumulate(np.concatenate(([np.inf], c[:-1])))
    return np.asarray(order[c < best_before], dtype=np.intp)


def _key(c: Candidate, use_p90: bool) -> tuple[float, float]:
    return (c.p90_usd, c.p90_wall_hours) if use_p90 else (c.total_usd, c.wall_hours)


def _user_feasible(
    c: Candidate, deadline: float | None, budget: float | None, use_p90: bool
) -> bool:
    if c.p90_usd != c.p90_usd:  # NaN marks "does not fit in HBM"
        return False
    cost, wall = _key(c, use_p90)
    return (deadline is None or wall <= deadline) and (budget is None or cost <= budget)


def _user_candidate(plan: Plan, catalog: Catalog, today: date | None) -> Candidate:
    """The user's plan priced exactly by the drivers, with the same P90 approximation."""
    u = usage_for(plan, catalog, today=today)
    priced, _ = price_arrays(_with_p90(u), catalog)
    totals = np.broadcast_to(priced, (2,))  # [expected, P90]; one number with no interruptions
    sd = float(_wall_sd(u))
    fits = _fits(u, catalog)
    return Candidate(
        provider=u.provider,
        region=u.region,
        instance=u.instance.instance,
        accelerator=u.accelerator.id,
        nodes=u.nodes,
        gpus=u.gpus,
        orchestrator=u.orchestrator,
        spot_fraction=u.purchase.spot_fraction,
        savings_plan=u.purchase.savings_plan,
        savings_plan_coverage=u.purchase.savings_plan_coverage,
        checkpoint_interval_hours=u.checkpoint.interval_hours,
        total_usd=float(totals[0]),
        wall_hours=u.wall_hours,
        p90_usd=float(totals[1]) if fits else math.nan,
        p90_wall_hours=u.wall_hours + P90_Z * sd,
        is_user_plan=True,
    )


def _infeasible(
    worst: dict[str, float], deadline: float | None, budget: float | None, use_p90: bool
) -> InfeasibleError:
    what = "P90 " if use_p90 else ""
    if math.isinf(worst["min_wall"]):
        msg = (
            "no candidate cluster holds the model's training state in GPU memory; "
            "add larger node counts"
        )
        return InfeasibleError(msg, binding="memory")
    if deadline is not None and worst["min_wall"] > deadline:
        short = worst["min_wall"] - deadline
        msg = (
            f"nothing meets the deadline of {deadline:,.1f} h: the fastest plan searched takes "
            f"{worst['min_wall']:,.1f} h ({what}wall-clock), "
            f"{short:,.1f} h ({short / deadline:.0%}) over. "
            "To fix: allow more time, or search more nodes or faster instances"
        )
        return InfeasibleError(msg, binding="deadline", shortfall=short)
    assert budget is not None
    cheapest = worst["min_cost_in_time"] if deadline is not None else worst["min_cost"]
    over = cheapest - budget
    within = f" within the {deadline:,.1f} h deadline" if deadline is not None else ""
    msg = (
        f"nothing fits the budget of ${budget:,.0f}: the cheapest plan{within} costs "
        f"${cheapest:,.0f} ({what}cost), ${over:,.0f} ({over / budget:.0%}) over. "
        "To fix: raise the budget or relax the deadline"
    )
    return InfeasibleError(msg, binding="budget", shortfall=over)


def _rightsizing(
    blocks: Sequence[_Block], best: Candidate, use_p90: bool
) -> tuple[RightSizeRow, ...]:
    """The best configuration at every node count searched for its instance."""
    block = next((b for b in blocks if b.inst.instance == best.instance), None)
    if block is None:
        return ()
    a = block.axes
    try:
        o = a.orchestrators.index(best.orchestrator)
        i = a.intervals.index(best.checkpoint_interval_hours)
        s = a.spots.index(best.spot_fraction)
        k = a.sp.index(
            _SpOption(
                term=best.savings_plan,
                coverage=best.savings_plan_coverage,
                kind=best.savings_plan_kind,
            )
        )
    except ValueError:
        return ()
    shape = (len(a.nodes), len(a.orchestrators), len(a.intervals), len(a.spots), len(a.sp))
    points: list[tuple[int, float, float]] = []  # (nodes, cost, wall) of every count that fits
    n_idx = np.arange(len(a.nodes))
    flats = np.ravel_multi_index((n_idx, o, i, s, k), shape)
    kept = np.flatnonzero(block.row_ok[flats // len(a.sp)])
    for n, (total, exp_wall, p90, p90_wall) in zip(
        kept.tolist(), block.points(flats[kept].tolist()), strict=True
    ):
        if not math.isfinite(total):
            continue
        points.append((a.nodes[n], p90 if use_p90 else total, p90_wall if use_p90 else exp_wall))
    if not points:
        return ()
    fewest = min(nodes * wall for nodes, _, wall in points)
    rows: list[RightSizeRow] = []
    prev: tuple[float, float] | None = None
    for nodes, cost, wall in points:
        per_hour: float | None = None
        pays = True
        if prev is not None:
            saved = prev[1] - wall
            per_hour = (cost - prev[0]) / saved if saved > 0 else None
            pays = cost * wall < prev[0] * prev[1]
        rows.append(
            RightSizeRow(
                nodes=nodes,
                gpus=nodes * block.inst.accelerator_count,
                wall_hours=wall,
                efficiency=fewest / (nodes * wall),
                total_usd=cost,
                usd_per_hour_saved=per_hour,
                pays=pays,
            )
        )
        prev = (cost, wall)
    return tuple(rows)
