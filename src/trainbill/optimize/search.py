"""The search itself: check the inputs, price every instance's grid, fold the blocks into the
winner, the Pareto front and the feasible count, and dress the result (``optimize``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Literal

import numpy as np
import numpy.typing as npt

from trainbill.catalog import Catalog
from trainbill.errors import SpecError, TrainbillError
from trainbill.forecasting import forecast, quote_of, wall_clock_answered
from trainbill.memory import MemoryFitError
from trainbill.optimize.caveats import _Noter
from trainbill.optimize.grid import FloatArray, _Block, _evaluate_all
from trainbill.optimize.results import (
    Candidate,
    OptimizationResult,
    _candidate,
    _candidates,
    _infeasible,
    _key,
    _pareto_indices,
    _rightsizing,
    _user_candidate,
    _user_feasible,
)
from trainbill.optimize.space import (
    SearchSpace,
    _check_not_empty,
    _validate,
    candidate_plan,
    search_instances,
)
from trainbill.spec import Plan, orchestrator_on
from trainbill.usage import Usage, resolve_cluster, usage_for

Objective = Literal["expected", "p90"]


@dataclass(slots=True)
class _Search:
    """The winner, the Pareto front, the feasible count and the bounds an infeasible search
    reports, accumulated block by block.

    Wall hours do not depend on the Savings Plan axis (last), so every question is answered by
    each row's cheapest valid option (first on ties, as a stable sort would): the minimum
    objective, the lexicographic (objective, wall, index) winner and the front.
    """

    deadline: float | None
    budget: float | None
    use_p90: bool
    best: tuple[float, float, int, int] | None = None  # (objective, wall, block, index)
    #: Each block's Pareto front as (block index, flat indices, objectives, wall hours): the
    #: global front is picked from these arrays, and only its points become candidates.
    front: list[tuple[int, npt.NDArray[np.intp], FloatArray, FloatArray]] = field(
        default_factory=list
    )
    feasible: int = 0
    worst: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(
            ("min_wall", "min_cost", "min_cost_in_time"), math.inf
        )
    )

    def add(self, bi: int, b: _Block) -> None:
        """Fold one block in."""
        wall = b.p90_wall if self.use_p90 else b.wall
        ok = b.row_ok
        in_time = ok if self.deadline is None else ok & (wall <= self.deadline)
        self._bounds(b, wall, ok, in_time)
        if self.budget is not None:
            self.feasible += int(b.within_budget[in_time].sum())
            feas_rows = in_time & (b.best <= self.budget)
        else:
            self.feasible += int(b.priced[in_time].sum())
            feas_rows = in_time
        nsp = len(b.axes.sp)
        if feas_rows.any():
            idx = np.flatnonzero(feas_rows)
            lowest = b.best[idx].min()
            ties = idx[b.best[idx] == lowest]
            r = int(ties[np.argmin(wall[ties])])
            key = (float(lowest), float(wall[r]), bi, r * nsp + int(b.arg[r]))
            if self.best is None or key[:2] < self.best[:2]:
                self.best = key
        on_front = ok & (b.best <= self.budget) if self.budget is not None else ok
        rows = np.flatnonzero(on_front)
        on = rows[_pareto_indices(b.best[rows], wall[rows])]
        self.front.append((bi, on * nsp + b.arg[on], b.best[on], wall[on]))

    def _bounds(
        self,
        b: _Block,
        wall: FloatArray,
        ok: npt.NDArray[np.bool_],
        in_time: npt.NDArray[np.bool_],
    ) -> None:
        w = self.worst
        if ok.any():
            w["min_wall"] = min(w["min_wall"], float(wall[ok].min()))
            w["min_cost"] = min(w["min_cost"], float(b.best[ok].min()))
        if self.deadline is not None and in_time.any():
            w["min_cost_in_time"] = min(w["min_cost_in_time"], float(b.best[in_time].min()))


def _check_template(plan: Plan, catalog: Catalog, today: date | None) -> None:
    """The template's own numbers must be computable: a 1e308 GB volume or a 1e300-hour restart
    would otherwise surface as a NumPy failure deep in the search. A template that is merely
    infeasible (no fit in memory at its own size, no price) is fine: the search looks further."""
    try:
        forecast(plan, catalog, today=today)
    except SpecError:
        raise
    except TrainbillError:
        pass


def _choose(
    blocks: Sequence[_Block],
    best: tuple[float, float, int, int] | None,
    feasible_user: Candidate | None,
    use_p90: bool,
    noter: _Noter,
) -> Candidate:
    """The grid's winner, or the user's own plan when it is feasible and no worse (ties: the
    plan as written), with its caveats."""
    if best is None:
        assert feasible_user is not None  # the caller raised otherwise
        return feasible_user
    chosen = _candidate(blocks[best[2]], best[3], noter)
    if feasible_user is not None and _key(feasible_user, use_p90) <= _key(chosen, use_p90):
        return feasible_user
    return chosen


def optimize(
    plan: Plan,
    catalog: Catalog,
    *,
    space: SearchSpace | None = None,
    objective: Objective = "expected",
    deadline_hours: float | None = None,
    budget_usd: float | None = None,
    clouds: Sequence[str] | None = None,
    today: date | None = None,
    allow_stand_ins: bool = False,
) -> OptimizationResult:
    """Search the grid for the cheapest plan meeting the deadline and budget.

    Args:
        plan: the user's plan; always a candidate, and the template for every other one.
        catalog: prices and hardware.
        space: the grid (defaults derived from the plan; see ``SearchSpace``).
        objective: "expected" (forecast's total) or "p90" (normal approximation; package doc).
        deadline_hours: wall-clock limit; defaults to the plan's ``run.deadline_hours``.
        budget_usd: cost limit on the objective.
        clouds: providers to search ("aws", "gcp", "azure"), every accelerator on them; None =
            the plan's own cloud and accelerator vendor (what its code already runs on).
        today: the date for price look-ups when the plan has no ``prices.as_of``.
        allow_stand_ins: also search catalog stand-ins (instances or on-demand prices no
            cloud publishes); by default only what can be bought is recommended.

    Returns:
        ``OptimizationResult`` with the best candidate, its plan, the Pareto front, the
        right-sizing table and how many configurations were evaluated. Every candidate
        carries its ``caveats`` against the plan (accelerator, cloud, spot share, stand-in).

    Raises:
        SpecError: deadline/budget <= 0, unknown cloud or bad search-space values.
        InfeasibleError: nothing meets the constraints; names the binding one and by how much.
    """
    started = time.perf_counter()
    space = space or SearchSpace()
    deadline = deadline_hours if deadline_hours is not None else plan.run.deadline_hours
    allowed = _check_inputs(space, objective, deadline, budget_usd, clouds)
    use_p90 = objective == "p90"
    skipped: list[str] = []
    user = _user_or_none(plan, catalog, today, skipped)
    instances, left_out = search_instances(
        plan, catalog, space, allowed, allow_stand_ins=allow_stand_ins, today=today
    )
    skipped.extend(left_out)
    interval = user.checkpoint_interval_hours if user is not None else None
    blocks = _evaluate_all(
        plan, catalog, space, instances, interval, today, use_p90, budget_usd, skipped,
        has_user=user is not None,
    )  # fmt: skip
    search = _Search(deadline=deadline, budget=budget_usd, use_p90=use_p90)
    for bi, b in enumerate(blocks):
        search.add(bi, b)
    user_ok = user is not None and _user_feasible(user, deadline, budget_usd, use_p90)
    if search.best is None and (user is None or not user_ok):
        raise _infeasible(search.worst, deadline, budget_usd, use_p90)
    noter = _noter(plan, catalog, user, today, deadline)
    if user is not None:
        user = replace(user, caveats=noter.of(*_noted(user)))
    chosen = _choose(blocks, search.best, user if user_ok else None, use_p90, noter)
    best_plan = plan if chosen.is_user_plan else _plan_of(plan, catalog, chosen)
    if deadline != best_plan.run.deadline_hours:
        # The deadline it was chosen for travels with it: ``simulate``/``report`` on the written
        # plan then show the odds of meeting it.
        run = best_plan.run.model_copy(update={"deadline_hours": deadline})
        best_plan = best_plan.model_copy(update={"run": run})
    pareto = _front(blocks, search.front, user, budget_usd, use_p90, noter)
    rows = _rightsizing(blocks, chosen, use_p90)
    return OptimizationResult(
        best=chosen,
        best_plan=best_plan,
        user=user,
        pareto=tuple(pareto),
        rightsizing=rows,
        evaluated=sum(b.size for b in blocks) + 1,
        feasible=search.feasible + int(user_ok),
        elapsed_s=time.perf_counter() - started,
        objective=objective,
        deadline_hours=deadline,
        budget_usd=budget_usd,
        skipped=tuple(dict.fromkeys(skipped)),  # one note per reason, however often met
    )


def _check_inputs(
    space: SearchSpace,
    objective: str,
    deadline: float | None,
    budget_usd: float | None,
    clouds: Sequence[str] | None,
) -> tuple[str, ...] | None:
    """Refuse bad arguments before any pricing, naming the field; the clouds to search. (The
    plan itself is checked with its own usage: ``_user_or_none``.)"""
    if objective not in {"expected", "p90"}:
        msg = f"unknown objective {objective!r}; allowed values: expected, p90"
        raise SpecError(msg, field="objective")
    allowed = _validate(deadline, budget_usd, clouds, space)
    _check_not_empty(space)
    return allowed


def _user_or_none(
    plan: Plan, catalog: Catalog, today: date | None, skipped: list[str]
) -> Candidate | None:
    """The user's plan as a candidate, or None (with a note) when it does not fit in memory;
    refused, naming the field, where ``forecast`` would refuse it (``_check_template``).

    One usage and one pricing serve both: the candidate's expected cost is the forecast's
    total (the same drivers on the same usage), so where the total and the quote are finite
    and the wall-clock one a forecast answers (``forecasting.wall_clock_answered``),
    ``forecast`` refuses nothing the search needs refused (its other steps, the ledger's text,
    cautions and error band, refuse no plan whose usage was worked out). Otherwise, or where
    pricing fails, the forecast itself is the check, run first as it always was.
    """
    try:
        u = usage_for(plan, catalog, today=today)
        user = _user_candidate(u, catalog)
    except MemoryFitError as exc:
        _check_template(plan, catalog, today)
        # the plan as written cannot run; a larger searched cluster may
        skipped.append(f"your plan: not a candidate ({exc})")
        return None
    except TrainbillError:
        _check_template(plan, catalog, today)  # a SpecError it raises comes first
        raise
    if not _computable(u, catalog, user):
        _check_template(plan, catalog, today)
    return user


def _computable(u: Usage, catalog: Catalog, user: Candidate) -> bool:
    """Whether ``forecast_usage``'s finiteness check (``forecasting._check_finite``) passes
    for the plan's usage: a finite total means every charge's quantity and cost is finite
    (an infinite or NaN one makes the sum so). False where unsure: the caller then asks the
    forecast."""
    if not wall_clock_answered(u):
        return False
    if not math.isfinite(user.total_usd):
        return False
    try:
        quote = quote_of(u, catalog).usd
    except TrainbillError:
        return True  # forecast stops at the quote, before any check
    return math.isfinite(quote)


def _plan_of(plan: Plan, catalog: Catalog, chosen: Candidate) -> Plan:
    """The user's plan with the chosen candidate's searched fields (``candidate_plan``)."""
    return candidate_plan(
        plan,
        catalog,
        instance=chosen.instance,
        nodes=chosen.nodes,
        orchestrator=chosen.orchestrator,
        spot_fraction=chosen.spot_fraction,
        savings_plan=chosen.savings_plan,
        savings_plan_coverage=chosen.savings_plan_coverage,
        checkpoint_interval_hours=chosen.checkpoint_interval_hours,
        region=chosen.region,
        savings_plan_kind=chosen.savings_plan_kind,
    )


def _front(
    blocks: Sequence[_Block],
    fronts: Sequence[tuple[int, npt.NDArray[np.intp], FloatArray, FloatArray]],
    user: Candidate | None,
    budget: float | None,
    use_p90: bool,
    noter: _Noter,
) -> list[Candidate]:
    """The cost/time Pareto front over the blocks' fronts (``_Search.front``) and the user's
    plan, in the order of ``_pareto_indices``; only its points become candidates, noted. As for
    the blocks, only the budget applies, not the deadline: the front shows what each
    wall-clock costs."""
    mine = user is not None and _user_feasible(user, None, budget, use_p90)
    costs = [f[2] for f in fronts]
    walls = [f[3] for f in fronts]
    if user is not None and mine:
        cost, wall = _key(user, use_p90)
        costs.append(np.array([cost]))
        walls.append(np.array([wall]))
    if not costs:
        return []
    # block index and flat index of every point (the user's plan: block -1)
    which = np.concatenate([np.full(f[1].size, f[0]) for f in fronts] + [np.full(int(mine), -1)])
    flats = np.concatenate([f[1] for f in fronts] + [np.zeros(int(mine), dtype=np.intp)])
    picked = _pareto_indices(np.concatenate(costs), np.concatenate(walls))
    out: list[Candidate | None] = [None] * picked.size
    on = which[picked]
    for bi in dict.fromkeys(on.tolist()):
        at = np.flatnonzero(on == bi).tolist()
        if bi < 0:
            assert user is not None
            made = [user]
        else:
            made = _candidates(blocks[bi], flats[picked[at]].tolist(), noter)
        for j, c in zip(at, made, strict=True):
            out[j] = c
    return [c for c in out if c is not None]


def _noted(c: Candidate) -> tuple[tuple[str, str, str, str, str], int, float, float, float]:
    """What ``_Noter.of`` reads of a candidate."""
    where = (c.instance, c.accelerator, c.region, c.provider, c.orchestrator)
    return where, c.nodes, c.spot_fraction, c.wall_hours, c.p90_wall_hours


def _noter(
    plan: Plan,
    catalog: Catalog,
    user: Candidate | None,
    today: date | None,
    deadline: float | None = None,
) -> _Noter:
    """What gives a candidate its caveats against the user's plan (``caveats._Noter``)."""
    user_inst, _ = resolve_cluster(plan, catalog)
    as_of = plan.prices.as_of or today or date.today()  # noqa: DTZ011 - a calendar date, not a time
    spot_nodes = plan.purchase.spot_fraction * (user.nodes if user is not None else 0)
    mine = orchestrator_on(user_inst.provider, plan.cluster.orchestrator)
    return _Noter(
        user_inst=user_inst,
        user_spot_nodes=spot_nodes,
        catalog=catalog,
        as_of=as_of,
        deadline=deadline,
        user_orchestrator=mine,
    )
