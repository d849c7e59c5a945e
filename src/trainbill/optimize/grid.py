"""Pricing one instance's grid with the real cost drivers, as arrays.

Per (instance, orchestrator) one ``usage.usage_over_nodes`` over every node count (the time model
and ``usage_for``'s steps run once on arrays of node counts), which comes back in groups of node
counts that take the same driver branches, each one usage over a node-count axis;
``Usage.with_schedule`` spreads it over the interval × spot-share grid, ``_with_p90`` stacks the
P90 run on it, and ``costs.price_arrays`` prices every node count and Savings Plan option of the
group in one pass. Each chunk is reduced per row at once (``_Rows``)
so memory is bounded by one chunk; ``_Block.point`` prices any single configuration again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

import numpy as np
import numpy.typing as npt

from trainbill.catalog import Catalog, Instance
from trainbill.costs import price_arrays
from trainbill.costs._arrays import some
from trainbill.errors import CatalogError, SpecError
from trainbill.memory import MemoryFitError
from trainbill.optimize.space import (
    SearchSpace,
    _Axes,
    _axes_for,
    _reference_peak,
    _scaled_hours,
    candidate_plan,
    uncovered_by_held,
)
from trainbill.spec import MAX_HOURS, Plan
from trainbill.usage import (
    Job,
    NodeSweep,
    Usage,
    hyperpod_spot_note,
    hyperpod_unpriced,
    resolve_job,
    usage_over_nodes,
)

FloatArray = npt.NDArray[np.float64]


#: One-sided 90% quantile of the standard normal distribution.
P90_Z = 1.2815515655446004


def _fits(u: Usage, catalog: Catalog) -> Any:
    """Weights, gradients and Adam state, fully sharded, fit the cluster's HBM (forecast's test);
    elementwise over a usage stacked over node counts."""
    if u.compute.params is None:
        return True
    need = u.compute.params * float(catalog.value("time.model_state_bytes_per_param")) / 1e9
    return need <= u.gpus * u.accelerator.hbm_gb


def _wall_sd(u: Usage) -> FloatArray:
    """Standard deviation of the hours lost to interruptions (compound Poisson, package doc):
    events × (L² + I²/12), L = interval / 2 + restart the mean loss per event."""
    events = np.asarray(u.reliability.failure_events + u.reliability.reclaim_events)
    each = u.lost_hours_each
    return np.sqrt(events * (each**2 + u.checkpoint.interval_hours**2 / 12.0))


def _schedule(base: Usage, iv: FloatArray, sp: FloatArray) -> Usage:
    """``base`` over the grid: intervals on axis 0, spot shares on axis 1."""
    grid: dict[str, Any] = {"interval_hours": iv[:, None], "spot_fraction": sp[None, :]}
    return base.with_schedule(**grid)


def _with_p90(u: Usage) -> Usage:
    """The usage stacked on a new leading axis: [expected run, run at its P90 lost hours].

    The P90 run loses P90_Z × sd more hours to interruptions, shared between failures and
    reclaims in proportion to their expected counts; the drivers price both runs at once, so
    its cost is the drivers' (every wall-clock line lengthens too), not a linearisation.
    """
    extra = P90_Z * _wall_sd(u)
    r = u.reliability
    events = np.asarray(r.failure_events + r.reclaim_events, dtype=np.float64)
    share = np.divide(r.failure_events, events, out=np.zeros(np.shape(events)), where=events > 0)
    fail = np.stack(np.broadcast_arrays(r.failure_lost_hours, r.failure_lost_hours + extra * share))
    reclaim = np.stack(
        np.broadcast_arrays(r.reclaim_lost_hours, r.reclaim_lost_hours + extra * (1.0 - share))
    )
    stacked: dict[str, Any] = {"failure_lost_hours": fail, "reclaim_lost_hours": reclaim}
    return replace(u, reliability=replace(r, **stacked))


@dataclass(slots=True)
class _Pricer:
    """Prices one instance's grids with ``costs.price_arrays``, remembering what has no price.

    A missing spot price takes spot off the instance's grid; a missing commitment rate takes that
    (orchestrator, term) off it; each once, with a note. Savings Plan options are priced by
    replacing the usage's term and coverage (the plan's own fields, passed through by
    ``usage_for``): coverage is an array on its own axis.
    """

    catalog: Catalog
    inst: Instance
    axes: _Axes
    spot_ok: bool = True
    dead: set[tuple[str, str, str]] = field(default_factory=set)  # (orch, term, kind) unpriced
    notes: list[str] = field(default_factory=list)
    #: Why a commitment the plan already holds does not cover this instance (an EC2 Instance
    #: Savings Plan of another family), or None: its options are then no candidates, and the
    #: instance is priced without it (the article's "switching to Trainium loses the discount").
    uncovered: str | None = None

    def price(self, base: Usage, iv: FloatArray, sp: FloatArray) -> tuple[FloatArray, Usage]:
        """Costs (K options, [expected, P90], [node counts,] intervals, spots), +inf where not
        priced, and the expected run over the grid (its spot shares zero where spot has no
        price). A usage stacked over node counts (``usage_over_nodes``) adds their axis."""
        spots = sp if self.spot_ok else np.zeros_like(sp)
        sched = _schedule(base, iv, spots)
        shape = (2, *np.shape(base.nodes)[:1], iv.size, spots.size)
        if base.orchestrator == "hyperpod" and self._hyperpod_unpriced(base, spot=0.0):
            return np.full((len(self.axes.sp), *shape), np.inf), sched
        try:
            out = self._options(base.orchestrator, _with_p90(sched), shape)
        except CatalogError as exc:
            if not self.spot_ok or not some(sp > 0):
                raise
            self.spot_ok = False
            self.notes.append(f"{self.inst.instance}: spot not searched ({exc})")
            return self.price(base, iv, sp)
        if not self.spot_ok or (
            base.orchestrator == "hyperpod"
            and (self._hyperpod_before_spot(base) or self._hyperpod_unpriced(base, spot=1.0))
        ):
            out[..., sp > 0] = np.inf
        return out, sched

    def _hyperpod_before_spot(self, base: Usage) -> bool:
        """A HyperPod run dated before HyperPod offered Spot (``usage.hyperpod_spot_note``): its
        spot mixes cannot be bought, so they are not candidates. Noted once per instance."""
        said = hyperpod_spot_note(self.catalog, "hyperpod", 1.0, base.run_date)
        if said:
            note = f"{self.inst.instance}: HyperPod on spot not searched (run dated "
            note += f"{base.run_date.isoformat()}, before HyperPod offered Spot)"
            if note not in self.notes:
                self.notes.append(note)
        return bool(said)

    def _hyperpod_unpriced(self, base: Usage, *, spot: float) -> bool:
        """Whether HyperPod has a charge the catalog cannot price: on demand its ml.* premium,
        on spot also a HyperPod Spot rate (``usage.hyperpod_unpriced``, the forecast's own
        warning). Such points are not candidates: ranked, they would win by the missing
        charge. Noted once per instance."""

        def gaps(share: float) -> tuple[str, ...]:
            return hyperpod_unpriced(
                self.catalog, self.inst, "hyperpod", share, base.provider, base.region, base.as_of
            )

        missing = gaps(spot) if spot == 0 else tuple(g for g in gaps(spot) if g not in gaps(0.0))
        for gap in missing:
            note = (
                f"{self.inst.instance}: HyperPod {'on spot ' if spot else ''}not searched ({gap})"
            )
            if note not in self.notes:
                self.notes.append(note)
        return bool(missing)

    def _options(self, orch: str, grid: Usage, shape: tuple[int, ...]) -> FloatArray:
        parts: list[FloatArray] = []
        for term, kind in dict.fromkeys((o.term, o.kind) for o in self.axes.sp):
            covs = np.array([o.coverage for o in self.axes.sp if (o.term, o.kind) == (term, kind)])
            parts.append(self._term(grid, orch, term, kind, covs, shape))
        return np.concatenate(parts, axis=0)

    def _term(
        self,
        grid: Usage,
        orch: str,
        term: str,
        kind: str,
        covs: FloatArray,
        shape: tuple[int, ...],
    ) -> FloatArray:
        out = np.full((covs.size, *shape), np.inf)
        if (orch, term, kind) in self.dead:
            return out
        if term != "none" and self.uncovered is not None:
            self._dead(orch, term, kind, self.uncovered)
            return out
        if kind and orch == "hyperpod":
            # HyperPod nodes are SageMaker usage: only a SageMaker Savings Plan covers them,
            # priced under the plan's own kind ("" option); a searched EC2 kind is no option.
            self.dead.add((orch, term, kind))
            return out
        purchase = replace(grid.purchase, savings_plan=term)
        if kind:
            purchase = replace(purchase, savings_plan_kind=kind)
        cov: dict[str, Any] = {"savings_plan_coverage": covs.reshape(-1, *(1,) * len(shape))}
        option = replace(grid, purchase=replace(purchase, **cov))
        try:
            total, _ = price_arrays(option, self.catalog)
        except CatalogError as exc:
            if term == "none":
                raise
            self._dead(orch, term, kind, str(exc))
            return out
        out[...] = total
        return out

    def _dead(self, orch: str, term: str, kind: str, why: str) -> None:
        """Take an (orchestrator, term, kind) off the grid, with its note once."""
        self.dead.add((orch, term, kind))
        name = f"{term} {kind + ' ' if kind else ''}Savings Plan"
        note = f"{self.inst.instance}: {name} not searched ({why})"
        if note not in self.notes:
            self.notes.append(note)


@dataclass(slots=True)
class _Block:
    """One instance's evaluated grid, reduced per row as it was priced.

    A row is one (nodes, orchestrator, interval, spot share) point; the Savings Plan options
    (last in the flat order) are reduced to the row's cheapest valid one for the objective
    (first on ties), with its expected and P90 cost, and how many options are priced and within
    the budget. ``point`` prices any single configuration again with the same code.
    """

    inst: Instance
    region: str
    axes: _Axes
    pricer: _Pricer
    #: Per (node index, orchestrator index): the usage its node count was priced in (its group's,
    #: stacked over node counts) and its position there.
    bases: dict[tuple[int, int], tuple[Usage, int]]
    wall: FloatArray  # (rows,) expected wall hours
    p90_wall: FloatArray  # (rows,)
    row_ok: npt.NDArray[np.bool_]  # (rows,) fits in HBM and at least one option priced
    best: FloatArray  # (rows,) the cheapest option's objective (inf if none)
    arg: npt.NDArray[np.intp]  # (rows,) its option index
    best_total: FloatArray  # (rows,) its expected cost
    best_p90: FloatArray  # (rows,) its P90 cost
    priced: npt.NDArray[np.int64]  # (rows,) options with a price
    within_budget: npt.NDArray[np.int64]  # (rows,) priced options within the budget

    @property
    def shape(self) -> tuple[int, int, int, int, int]:
        """(nodes, orchestrators, intervals, spots, Savings Plan options)."""
        a = self.axes
        return (len(a.nodes), len(a.orchestrators), len(a.intervals), len(a.spots), len(a.sp))

    @property
    def size(self) -> int:
        """Configurations in the block (rows × Savings Plan options)."""
        return math.prod(self.shape)

    @property
    def fits(self) -> npt.NDArray[np.bool_]:
        """Flat validity mask over all configurations (flat order nodes, orch, interval, spot,
        SP)."""
        n, o, i, s, _ = self.shape
        a = self.axes
        option_ok = np.array(
            [
                [(orch, opt.term, opt.kind) not in self.pricer.dead for opt in a.sp]
                for orch in a.orchestrators
            ]
        )
        ok = self.row_ok.reshape(n, o, i, s)[..., None] & option_ok[None, :, None, None, :]
        return np.asarray(ok.reshape(-1))

    def _costs(self, ni: int, oi: int, ii: int, si: int) -> FloatArray:
        iv = np.array(self.axes.intervals[ii : ii + 1])
        sp = np.array(self.axes.spots[si : si + 1])
        usage, at = self.bases[ni, oi]
        costs = self.pricer.price(usage, iv, sp)[0]  # (K, 2, [N,] 1, 1)
        return costs[:, :, at, 0, 0] if costs.ndim == 5 else costs[:, :, 0, 0]

    def point(self, flat: int) -> tuple[float, float, float, float]:
        """(total, wall, p90, p90_wall) of one configuration, priced as in the search."""
        return self.points([flat])[0]

    def points(self, flats: Sequence[int]) -> list[tuple[float, float, float, float]]:
        """``point`` of each configuration: a row's cheapest option (what the front and the
        right-sizing read) from the reduced arrays at once, any other priced again."""
        at = np.asarray(flats, dtype=np.intp).reshape(-1)
        rows = at // self.shape[4]
        best = (at % self.shape[4] == self.arg[rows]).tolist()
        figures = zip(
            self.best_total[rows].tolist(), self.wall[rows].tolist(),
            self.best_p90[rows].tolist(), self.p90_wall[rows].tolist(), strict=True,
        )  # fmt: skip
        return [
            fig if ok else self._priced_again(int(flat))
            for flat, ok, fig in zip(at.tolist(), best, figures, strict=True)
        ]

    def _priced_again(self, flat: int) -> tuple[float, float, float, float]:
        """``point`` of a configuration that is not its row's cheapest option."""
        ni, oi, ii, si, k = (int(x) for x in np.unravel_index(int(flat), self.shape))
        row = int(flat) // self.shape[4]
        wall, p90_wall = float(self.wall[row]), float(self.p90_wall[row])
        if (ni, oi) not in self.bases:
            return math.inf, wall, math.inf, p90_wall
        costs = self._costs(ni, oi, ii, si)
        return float(costs[k, 0]), wall, float(costs[k, 1]), p90_wall


@dataclass(slots=True)
class _Rows:
    """Per-row results of one instance's grid, filled one (nodes, orchestrator) chunk at a time."""

    shape: tuple[int, int, int, int]
    use_p90: bool
    budget: float | None
    wall: FloatArray = field(init=False)
    p90_wall: FloatArray = field(init=False)
    best: FloatArray = field(init=False)
    arg: npt.NDArray[np.intp] = field(init=False)
    best_total: FloatArray = field(init=False)
    best_p90: FloatArray = field(init=False)
    priced: npt.NDArray[np.int64] = field(init=False)
    within: npt.NDArray[np.int64] = field(init=False)

    def __post_init__(self) -> None:
        self.wall, self.p90_wall = np.full(self.shape, np.inf), np.full(self.shape, np.inf)
        self.best, self.best_total = np.full(self.shape, np.inf), np.full(self.shape, np.inf)
        self.best_p90 = np.full(self.shape, np.inf)
        self.arg = np.zeros(self.shape, dtype=np.intp)
        self.priced = np.zeros(self.shape, dtype=np.int64)
        self.within = np.zeros(self.shape, dtype=np.int64)

    def add(self, ni: list[int], oi: int, sched: Usage, costs: FloatArray) -> None:
        """Reduce one chunk's costs (K options, [expected, P90], [N,] I, S) along the options:
        the chunk of node counts ``ni`` (their axis present when there are several)."""
        self.wall[ni, oi] = sched.wall_hours
        self.p90_wall[ni, oi] = sched.wall_hours + P90_Z * _wall_sd(sched)
        obj = costs[:, 1 if self.use_p90 else 0]
        a = np.argmin(obj, axis=0)  # first on ties

        def at(x: FloatArray) -> FloatArray:
            picked: FloatArray = np.take_along_axis(x, a[None], axis=0)[0]
            return picked

        self.arg[ni, oi] = a
        self.best[ni, oi] = at(obj)
        self.best_total[ni, oi] = at(costs[:, 0])
        self.best_p90[ni, oi] = at(costs[:, 1])
        self.priced[ni, oi] = np.isfinite(obj).sum(axis=0)
        if self.budget is not None:
            self.within[ni, oi] = (obj <= self.budget).sum(axis=0)


def _evaluate_instance(
    plan: Plan,
    catalog: Catalog,
    inst: Instance,
    axes: _Axes,
    today: date | None,
    *,
    use_p90: bool = False,
    budget: float | None = None,
) -> tuple[_Block, list[str]]:
    """Price one instance's whole grid (nodes × orch × interval × spot × SP) with the drivers.

    Per orchestrator: one ``usage_over_nodes`` over the node counts (time model, checkpoint
    stall, interruption rates, all on arrays of node counts), in groups that take the same
    driver branches, each spread over the interval × spot grid by ``Usage.with_schedule`` and
    every Savings Plan option priced by ``costs.price_arrays`` in one pass; the chunk is reduced
    per row at once, so memory is bounded by one chunk. Node counts that cannot hold the model
    (the time model's memory test, or ``_fits``) are no candidates.
    """
    region = plan.cluster.region if inst.provider == plan.cluster.provider else None
    iv, sp = np.array(axes.intervals), np.array(axes.spots)
    rows = _Rows(
        shape=(len(axes.nodes), len(axes.orchestrators), iv.size, sp.size),
        use_p90=use_p90,
        budget=budget,
    )
    held = uncovered_by_held(plan, catalog, inst)
    pricer = _Pricer(catalog=catalog, inst=inst, axes=axes, uncovered=held)
    bases: dict[tuple[int, int], tuple[Usage, int]] = {}
    made = _Bases(plan=plan, catalog=catalog, inst=inst, interval=iv[0], region=region, today=today)
    for oi, orch in enumerate(axes.orchestrators):
        for g, usage in made.fitting(axes.nodes, orch):
            costs, sched = pricer.price(usage, iv, sp)
            rows.add(list(g), oi, sched, costs)
            bases.update(((ni, oi), (usage, k)) for k, ni in enumerate(g))
    if not bases and made.too_small is not None:
        raise made.too_small
    block = _Block(
        inst=inst,
        region=next(iter(bases.values()))[0].region if bases else str(region or ""),
        axes=axes,
        pricer=pricer,
        bases=bases,
        wall=rows.wall.reshape(-1),
        p90_wall=rows.p90_wall.reshape(-1),
        row_ok=(rows.priced > 0).reshape(-1),
        best=rows.best.reshape(-1),
        arg=rows.arg.reshape(-1),
        best_total=rows.best_total.reshape(-1),
        best_p90=rows.best_p90.reshape(-1),
        priced=rows.priced.reshape(-1),
        within_budget=rows.within.reshape(-1),
    )
    return block, pricer.notes


@dataclass(slots=True)
class _Bases:
    """One instance's usages at its node counts, one orchestrator at a time, with what they
    share (the job and candidate plan per orchestrator).

    Per orchestrator one ``usage_over_nodes`` call answers every node count still searched. The
    job (cluster, region, data placement, commitment kind, warnings) is resolved once per
    orchestrator in ``jobs`` and shared by every node count: a candidate plan states its node
    count (never a GPU count to round), so nothing ``resolve_job`` works out depends on it.
    A node count that does not hold the model for one orchestrator (the time model's memory
    error, or ``_fits``) is no candidate for the later ones either (as the search always did);
    ``too_small`` keeps the last memory error, the instance's reason when nothing fits.
    """

    plan: Plan
    catalog: Catalog
    inst: Instance
    interval: float
    region: str | None
    today: date | None
    jobs: dict[str, Job] = field(default_factory=dict)
    plans: dict[str, Plan] = field(default_factory=dict)
    stopped: set[int] = field(default_factory=set)
    too_small: MemoryFitError | None = None
    #: The plan's GPUs × peak, when it states its hours (``space._reference_peak``).
    ref: float | None = field(init=False)

    def __post_init__(self) -> None:
        has_hours = self.plan.run.hours is not None
        self.ref = _reference_peak(self.plan, self.catalog) if has_hours else None

    def _candidate(self, orch: str, nodes: int, *, again: bool = False) -> Plan:
        """The candidate plan of ``orch`` (built and validated once per orchestrator, at the
        first node count it is asked at: ``usage_over_nodes`` reads what a node count does
        not change); ``again``: built anew at ``nodes`` (``candidate_plan`` refuses hours a
        plan cannot state, naming the field)."""
        cand = self.plans.get(orch)
        if cand is None or again:
            cand = self.plans[orch] = candidate_plan(
                self.plan, self.catalog, instance=self.inst.instance, nodes=nodes,
                orchestrator=orch, spot_fraction=1.0, savings_plan="none",
                savings_plan_coverage=0.0, checkpoint_interval_hours=self.interval,
                region=self.region,
            )  # fmt: skip
        return cand

    def fitting(self, nodes: Sequence[int], orch: str) -> tuple[tuple[tuple[int, ...], Usage], ...]:
        """The node indices whose usage on ``orch`` holds the model, in groups that price
        through the same driver branches, each with its usage stacked over them."""
        todo = [ni for ni in range(len(nodes)) if ni not in self.stopped]
        if not todo:
            return ()
        at = np.array([nodes[ni] for ni in todo], dtype=np.int64)
        cand = self._candidate(orch, int(at[0]))
        # (the hours a plan stating them scales to at each node count, as candidate_plan does)
        nodes_at: Any = at  # (elementwise: _scaled_hours's arithmetic broadcasts)
        hours = _scaled_hours(self.plan, self.catalog, self.inst, nodes_at, self.ref)
        if hours is not None:
            bad = np.flatnonzero(~((hours > 0) & (hours <= MAX_HOURS)))
            if bad.size:  # hours a plan cannot state: candidate_plan refuses them, naming the field
                self._candidate(orch, int(at[bad[0]]), again=True)
        job = self.jobs.get(orch)
        if job is None:
            job = self.jobs[orch] = resolve_job(cand, self.catalog, today=self.today)
        # (priced, never shown: no time-model text; ``_Block.bases`` is read only by pricing)
        sweep = usage_over_nodes(cand, self.catalog, job=job, nodes=at, hours=hours, explain=False)
        for i, err in sorted(sweep.errors.items()):
            if not isinstance(err, MemoryFitError):
                raise err  # (what usage_for raised for that node count, e.g. a batch too small)
            self.too_small = err
            self.stopped.add(todo[i])
        groups = tuple((tuple(todo[i] for i in g), u) for g, u in sweep.groups)
        kept = NodeSweep(groups=groups, errors={}).only(lambda u: _fits(u, self.catalog))
        held = {ni for g, _ in kept for ni in g}
        self.stopped.update(ni for g, _ in groups for ni in g if ni not in held)
        return kept


def _evaluate_all(
    plan: Plan,
    catalog: Catalog,
    space: SearchSpace,
    instances: Sequence[Instance],
    interval: float | None,
    today: date | None,
    use_p90: bool,
    budget: float | None,
    skipped: list[str],
    *,
    has_user: bool,
) -> list[_Block]:
    """Every instance's block; an instance with no price or no node count that holds the
    model is left out with a note in ``skipped``. None searched is an error unless the plan as
    written (``has_user``) remains to compare: then it is the answer, with the notes."""
    blocks: list[_Block] = []
    for inst in instances:
        axes = _axes_for(plan, catalog, space, inst, interval)
        try:
            block, notes = _evaluate_instance(
                plan, catalog, inst, axes, today, use_p90=use_p90, budget=budget
            )
        except (CatalogError, MemoryFitError) as exc:
            skipped.append(f"{inst.instance}: not searched ({exc})")
            continue
        blocks.append(block)
        skipped.extend(notes)
    if not blocks and not has_user:
        why = "; ".join(skipped[:3]) if skipped else "no instance of the chosen clouds"
        msg = f"no instance could be searched ({len(skipped)} skipped: {why})"
        raise SpecError(msg, field="clouds")
    return blocks
