"""What the planner returns: candidates, their caveats, the Pareto front, right-sizing and the
infeasibility message, all worked out from evaluated grids (``grid._Block``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field
from typing import Any

import numpy as np
import numpy.typing as npt

from trainbill._record import positional_builder, record
from trainbill.catalog import Catalog
from trainbill.costs import price_arrays
from trainbill.errors import InfeasibleError
from trainbill.optimize.caveats import Caveat, _Noter
from trainbill.optimize.grid import P90_Z, FloatArray, _Block, _fits, _wall_sd, _with_p90
from trainbill.optimize.space import _SpOption
from trainbill.spec import Plan
from trainbill.usage import Usage


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


def _candidate(block: _Block, flat: int, noter: _Noter | None = None) -> Candidate:
    """One configuration of ``block`` (its flat index) as a ``Candidate``."""
    return _candidates(block, [flat], noter)[0]


def _candidates(
    block: _Block, flats: Sequence[int], noter: _Noter | None = None
) -> list[Candidate]:
    """``_candidate`` of each flat index (the block's axes and figures read once), with their
    caveats against the plan when ``noter`` is given (else none)."""
    a = block.axes
    inst = block.inst
    index = np.unravel_index(np.asarray(flats, dtype=np.intp).reshape(-1), block.shape)
    n_i, o_i, i_i, s_i, k_i = (x.tolist() for x in index)
    nodes = [a.nodes[n] for n in n_i]
    orchs = [a.orchestrators[o] for o in o_i]
    spots = [a.spots[s] for s in s_i]
    figures = block.points(flats)
    walls = [f[1] for f in figures]
    p90_walls = [f[3] for f in figures]
    where = (inst.instance, inst.accelerator, block.region, inst.provider)
    caveats = (
        noter.many(where, orchs, nodes, spots, walls, p90_walls)
        if noter is not None
        else [()] * len(figures)
    )
    per_node = inst.accelerator_count
    out = []
    for j, (n, (total, wall, p90, p90_wall)) in enumerate(zip(nodes, figures, strict=True)):
        option = a.sp[k_i[j]]
        out.append(
            _new_candidate(
                inst.provider, block.region, inst.instance, inst.accelerator, n, n * per_node,
                orchs[j], spots[j], option.term, option.coverage, a.intervals[i_i[j]],
                total, wall, p90, p90_wall, False, caveats[j], option.kind,
            )
        )  # fmt: skip
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


def _user_candidate(u: Usage, catalog: Catalog) -> Candidate:
    """The user's plan (its usage) priced exactly by the drivers, with the same P90
    approximation."""
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
    """The best configuration at every node count searched for its instance: the best's
    orchestrator, interval, spot share and Savings Plan option, at each node count that fits
    and has a price."""
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
    n_idx = np.arange(len(a.nodes))
    flats = np.ravel_multi_index((n_idx, o, i, s, k), block.shape)
    kept = np.flatnonzero(block.row_ok[flats // len(a.sp)])
    points = np.array(block.points(flats[kept].tolist()), dtype=np.float64).reshape(-1, 4)
    finite = np.isfinite(points[:, 0])
    nodes = np.asarray(a.nodes, dtype=np.int64)[kept[finite]]
    if nodes.size == 0:
        return ()
    cost = points[finite, 2 if use_p90 else 0]
    wall = points[finite, 3 if use_p90 else 1]
    return _rightsize_rows(nodes, cost, wall, block.inst.accelerator_count)


def _rightsize_rows(
    nodes: npt.NDArray[np.int64], cost: FloatArray, wall: FloatArray, per_node: int
) -> tuple[RightSizeRow, ...]:
    """Right-sizing rows of node counts in order with their cost and wall hours: efficiency
    against the fewest node-hours, and against the row before, the dollars per wall hour saved
    (None when no hour is saved) and whether cost × time fell (the first row: True)."""
    node_hours = nodes * wall
    efficiency = node_hours.min() / node_hours
    saved = wall[:-1] - wall[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_hour = (cost[1:] - cost[:-1]) / saved
    spent = cost * wall
    pays = [True, *(spent[1:] < spent[:-1]).tolist()]
    per_hours: list[float | None] = [None]
    per_hours += [
        p if d > 0 else None for p, d in zip(per_hour.tolist(), saved.tolist(), strict=True)
    ]
    gpus = nodes * per_node
    columns = (nodes, gpus, wall, efficiency, cost)
    return tuple(map(_new_rightsize_row, *(x.tolist() for x in columns), per_hours, pays))


_new_candidate = positional_builder(Candidate)
_new_rightsize_row = positional_builder(RightSizeRow)
