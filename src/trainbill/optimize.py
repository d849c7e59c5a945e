"""Planner: the cheapest instance, cluster size, cloud, purchase mix and checkpoint interval.

The article's advice (right-size, buy Savings Plans for the baseline, use spot when
interruptions are tolerable, consider other clouds) as a search instead of opinions.

How the search stays consistent with ``forecast``: it *is* the forecast's code. For every
(instance, node count, orchestrator) the real ``usage_for`` works out the run (time model,
checkpoint stall, interruption rates); ``Usage.with_schedule`` re-derives it over the
interval × spot-share grid with NumPy arrays (the rule ``usage_for`` itself uses), and the real
cost drivers price every Savings Plan option of that grid at once (``costs.price_arrays``: the
drivers' arithmetic broadcasts, and costs are added in ledger order, so a grid point costs
exactly what ``forecast`` says for its candidate plan). Nothing is fitted, composed or probed.
The Savings Plan term and coverage are the plan's own fields, passed through ``usage_for``
unchanged, so each option replaces them on the usage.

Objective and constraints (minimise over the grid)::

    objective   = expected total (forecast's total_usd)            default
                | P90 total (normal approximation, below)           objective="p90"
    subject to  wall hours (P90 wall hours with "p90") <= deadline_hours
                objective cost <= budget_usd
                model state fits the cluster's HBM (when the model size is known)

P90: failures and reclaims are Poisson with the expected counts m the forecast uses; each loses
restart + U(0, interval) hours, so the lost hours have variance m·(L² + I²/12) (compound
Poisson, L the mean loss per event). P90 wall hours = mean + 1.2816·sd; the P90 cost is the
drivers' price of the run that loses those 1.2816·sd extra hours (``_with_p90``). The normal
approximation is rough when m
is below a few events; it ignores price uncertainty.

Plans that give only ``run.hours`` carry no FLOP count, so hours are scaled to a candidate
cluster by the GPU-count ratio and the peak-throughput ratio (dense peak at the plan's
precision): hours' = hours × (G₀ · peak₀) / (G · peak). Plans with ``model.params`` and
``model.tokens`` leave the hours to the time model.

Savings Plan coverage is searched only for the terms the caller names (default: the plan's own
term): the ledger treats a commitment as already bought, so a one-off run would otherwise always
"buy" a 3-year plan for free. Size a commitment with ``trainbill.commit`` instead.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from trainbill.catalog import PROVIDERS, Accelerator, Catalog, Instance
from trainbill.costs import price_arrays
from trainbill.costs._arrays import some
from trainbill.errors import CatalogError, InfeasibleError, SpecError, TrainbillError, suggest
from trainbill.forecast import forecast
from trainbill.memory import MemoryFitError
from trainbill.spec import MAX_NODES, ORCHESTRATORS, Plan, orchestrator_on, plan_from_dict
from trainbill.usage import Job, Usage, instance_family, resolve_cluster, resolve_job, usage_for

__all__ = [
    "ORCHESTRATORS",
    "P90_Z",
    "Candidate",
    "Caveat",
    "CaveatKind",
    "OptimizationResult",
    "RightSizeRow",
    "SearchSpace",
    "candidate_plan",
    "optimize",
    "own_mix_space",
]

FloatArray = npt.NDArray[np.float64]
Objective = Literal["expected", "p90"]
#: What a recommendation changes that the price alone does not show (see ``Caveat``).
CaveatKind = Literal["stand_in", "porting", "cloud", "older_gpu", "memory", "spot_capacity"]

#: One-sided 90% quantile of the standard normal distribution.
P90_Z = 1.2815515655446004
_N_FEATURES = 12
#: Indices of the features proportional to Savings Plan coverage (N·c·W, N·c·s·W, N·c, N·c·s).
_COVERAGE_FEATURES = (4, 5, 10, 11)
_PROBES = 16
_HOLDOUT = 4
_TIME_CHECKS = 12
_REL_TOL = 1e-9


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchSpace:
    """The grid to search. ``None`` axes are derived from the plan and catalog.

    Attributes:
        instances: instance types; None = every instance of the allowed clouds with a price.
        nodes: node counts (chips for per-chip TPUs); None = GPU counts from 1/8× to 8× the
            plan's in √2 steps, converted to nodes per instance.
        spot_fractions: shares of nodes on spot.
        savings_plans: commitment terms to consider ("1yr", "3yr"); None = the plan's own term.
        coverages: Savings Plan coverage levels tried for each term.
        orchestrators: tried where the provider offers them (see ``ORCHESTRATORS``).
        checkpoint_intervals_hours: checkpoint intervals.
    """

    instances: tuple[str, ...] | None = None
    nodes: tuple[int, ...] | None = None
    spot_fractions: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    savings_plans: tuple[str, ...] | None = None
    coverages: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
    orchestrators: tuple[str, ...] = ("ec2", "hyperpod", "eks")
    checkpoint_intervals_hours: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Caveat:
    """Why a recommendation may not be a drop-in swap for the user's plan, in one sentence.

    ``kind``: ``stand_in`` (a catalog stand-in, not something a cloud sells), ``porting`` (another
    accelerator vendor: the code must be ported), ``cloud`` (another cloud: account, quotas,
    data), ``older_gpu`` (an accelerator launched before the plan's), ``memory`` (less HBM per
    accelerator: the parallel layout must be re-tuned), ``spot_capacity`` (more nodes on spot
    than the plan: capacity at that size is not guaranteed).
    """

    kind: CaveatKind
    text: str

    def as_dict(self) -> dict[str, str]:
        """JSON-ready fields."""
        return {"kind": self.kind, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
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

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "instance": self.instance,
            "nodes": self.nodes,
            "spot_fraction": self.spot_fraction,
            "savings_plan": self.savings_plan,
            "savings_plan_coverage": self.savings_plan_coverage,
            "total_usd": self.total_usd,
            "wall_hours": self.wall_hours,
            "p90_usd": self.p90_usd,
            "p90_wall_hours": self.p90_wall_hours,
            "provider": self.provider,
            "region": self.region,
            "accelerator": self.accelerator,
            "gpus": self.gpus,
            "orchestrator": self.orchestrator,
            "checkpoint_interval_hours": self.checkpoint_interval_hours,
            "is_user_plan": self.is_user_plan,
            "caveats": [c.as_dict() for c in self.caveats],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
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


@dataclass(frozen=True, slots=True, kw_only=True)
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


def own_mix_space(usage: Usage, nodes: tuple[int, ...] | None = None) -> SearchSpace:
    """The grid that varies only the node count: the plan's instance, spot share, commitment,
    orchestrator and checkpoint interval held fixed (right-sizing, the report and the headline)."""
    defaults = SearchSpace()
    return SearchSpace(
        instances=(usage.instance.instance,),
        nodes=nodes,
        spot_fractions=(usage.purchase.spot_fraction,),
        savings_plans=(usage.purchase.savings_plan,),
        coverages=(usage.purchase.savings_plan_coverage,)
        if usage.purchase.savings_plan != "none"
        else defaults.coverages,
        orchestrators=(usage.orchestrator,),
        checkpoint_intervals_hours=(usage.checkpoint.interval_hours,)
        if usage.checkpoint.interval_hours > 0
        else defaults.checkpoint_intervals_hours,
    )


# --- candidate plans -------------------------------------------------------------------------
def _scaled_hours(plan: Plan, catalog: Catalog, inst: Instance, nodes: int) -> float | None:
    """run.hours scaled by GPU count × peak throughput (None when the time model derives it)."""
    if plan.run.hours is None:
        return None
    ref_inst, ref_nodes = resolve_cluster(plan, catalog)
    prec = plan.model.precision
    ref = (
        ref_nodes
        * ref_inst.accelerator_count
        * catalog.accelerator(ref_inst.accelerator).peak_tflops(prec)
    )
    new = nodes * inst.accelerator_count * catalog.accelerator(inst.accelerator).peak_tflops(prec)
    return plan.run.hours * ref / new


def candidate_plan(
    plan: Plan,
    catalog: Catalog,
    *,
    instance: str,
    nodes: int,
    orchestrator: str,
    spot_fraction: float,
    savings_plan: str,
    savings_plan_coverage: float,
    checkpoint_interval_hours: float,
    region: str | None = None,
) -> Plan:
    """The user's plan with the searched fields replaced (validated, ready to write as TOML).

    Everything else (model, storage, data, network, reliability, prices) is kept. A region is
    kept only when the provider is unchanged; otherwise the provider's reference region is used.
    """
    inst = catalog.instance(instance)
    data = plan.model_dump(mode="json", exclude_none=True)
    cluster = {
        k: v for k, v in data.get("cluster", {}).items() if k not in {"gpu", "gpus", "region"}
    }
    same_provider = inst.provider == plan.cluster.provider
    cluster.update(
        provider=inst.provider, instance=instance, nodes=nodes, orchestrator=orchestrator
    )
    if region is not None:
        cluster["region"] = region
    elif same_provider and plan.cluster.region is not None:
        cluster["region"] = plan.cluster.region
    data["cluster"] = cluster
    data["purchase"] = {
        **_commitment_kept(plan, catalog, inst, orchestrator),
        "spot_fraction": spot_fraction,
        "savings_plan": savings_plan,
        "savings_plan_coverage": savings_plan_coverage if savings_plan != "none" else 0.0,
    }
    data.setdefault("checkpoint", {})["interval_hours"] = checkpoint_interval_hours
    hours = _scaled_hours(plan, catalog, inst, nodes)
    if hours is not None:
        data.setdefault("run", {})["hours"] = hours
    return plan_from_dict(data, source="optimizer candidate")


def _commitment_kept(
    plan: Plan, catalog: Catalog, inst: Instance, orchestrator: str
) -> dict[str, str]:
    """The plan's commitment settings a candidate keeps: whose commitment always; the kind and
    family only where they still cover the candidate (same cloud, HyperPod or not, same family),
    else the candidate uses the default kind for its orchestrator (``trainbill.usage``)."""
    p = plan.purchase
    out: dict[str, str] = {} if p.commitment is None else {"commitment": p.commitment}
    if p.savings_plan_kind is None or inst.provider != "aws":
        return out
    if (p.savings_plan_kind == "sagemaker") != (orchestrator == "hyperpod"):
        return out
    if p.savings_plan_kind == "ec2-instance":
        family = p.savings_plan_family or instance_family(
            resolve_cluster(plan, catalog)[0].instance
        )
        if family != instance_family(inst.instance):
            return out
    out["savings_plan_kind"] = p.savings_plan_kind
    if p.savings_plan_family is not None:
        out["savings_plan_family"] = p.savings_plan_family
    return out


# --- grid pieces ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class _SpOption:
    term: str
    coverage: float


@dataclass(frozen=True, slots=True, kw_only=True)
class _Axes:
    nodes: tuple[int, ...]
    orchestrators: tuple[str, ...]
    intervals: tuple[float, ...]
    spots: tuple[float, ...]
    sp: tuple[_SpOption, ...]


def _sorted_unique(values: Iterable[float]) -> tuple[float, ...]:
    return tuple(sorted({float(v) for v in values}))


def _default_nodes(plan: Plan, catalog: Catalog, inst: Instance) -> tuple[int, ...]:
    ref_inst, ref_nodes = resolve_cluster(plan, catalog)
    gpus = ref_nodes * ref_inst.accelerator_count
    targets = [gpus * 2.0 ** (k / 2.0) for k in range(-6, 7)]
    # Capped at the plan schema's node limit: a candidate past it is not a valid plan.
    return tuple(
        sorted({min(MAX_NODES, max(1, round(g / inst.accelerator_count))) for g in targets})
    )


def _fits(u: Usage, catalog: Catalog) -> bool:
    """Weights, gradients and Adam state, fully sharded, fit the cluster's HBM (forecast's test)."""
    if u.compute.params is None:
        return True
    need = u.compute.params * float(catalog.value("time.model_state_bytes_per_param")) / 1e9
    return need <= u.gpus * u.accelerator.hbm_gb


# --- pricing a grid with the real drivers ---------------------------------------------------
def _wall_sd(u: Usage) -> FloatArray:
    """Standard deviation of the hours lost to interruptions (compound Poisson, module doc):
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
    dead: set[tuple[str, str]] = field(default_factory=set)  # (orchestrator, term) not priced
    notes: list[str] = field(default_factory=list)

    def price(self, base: Usage, iv: FloatArray, sp: FloatArray) -> tuple[FloatArray, Usage]:
        """Costs (K options, [expected, P90], intervals, spots), +inf where not priced, and the
        expected run over the grid (its spot shares zero where spot has no price)."""
        spots = sp if self.spot_ok else np.zeros_like(sp)
        sched = _schedule(base, iv, spots)
        try:
            out = self._options(base.orchestrator, _with_p90(sched), (2, iv.size, spots.size))
        except CatalogError as exc:
            if not self.spot_ok or not some(sp > 0):
                raise
            self.spot_ok = False
            self.notes.append(f"{self.inst.instance}: spot not searched ({exc})")
            return self.price(base, iv, sp)
        if not self.spot_ok:
            out[..., sp > 0] = np.inf
        return out, sched

    def _options(self, orch: str, grid: Usage, shape: tuple[int, ...]) -> FloatArray:
        parts: list[FloatArray] = []
        for term in dict.fromkeys(o.term for o in self.axes.sp):
            covs = np.array([o.coverage for o in self.axes.sp if o.term == term])
            parts.append(self._term(grid, orch, term, covs, shape))
        return np.concatenate(parts, axis=0)

    def _term(
        self, grid: Usage, orch: str, term: str, covs: FloatArray, shape: tuple[int, ...]
    ) -> FloatArray:
        out = np.full((covs.size, *shape), np.inf)
        if (orch, term) in self.dead:
            return out
        cov: dict[str, Any] = {"savings_plan_coverage": covs.reshape(-1, 1, 1, 1)}
        option = replace(grid, purchase=replace(grid.purchase, savings_plan=term, **cov))
        try:
            total, _ = price_arrays(option, self.catalog)
        except CatalogError as exc:
            if term == "none":
                raise
            self.dead.add((orch, term))
            self.notes.append(f"{self.inst.instance}: {term} Savings Plan not searched ({exc})")
            return out
        out[...] = total
        return out


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
    bases: dict[tuple[int, int], Usage]
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
        """Flat validity mask over all configurations (flat order nodes, orch, interval, spot, SP)."""
        n, o, i, s, _ = self.shape
        a = self.axes
        option_ok = np.array(
            [[(orch, opt.term) not in self.pricer.dead for opt in a.sp] for orch in a.orchestrators]
        )
        ok = self.row_ok.reshape(n, o, i, s)[..., None] & option_ok[None, :, None, None, :]
        return np.asarray(ok.reshape(-1))

    def _costs(self, ni: int, oi: int, ii: int, si: int) -> FloatArray:
        iv = np.array(self.axes.intervals[ii : ii + 1])
        sp = np.array(self.axes.spots[si : si + 1])
        return self.pricer.price(self.bases[ni, oi], iv, sp)[0][:, :, 0, 0]

    def point(self, flat: int) -> tuple[float, float, float, float]:
        """(total, wall, p90, p90_wall) of one configuration, priced as in the search."""
        ni, oi, ii, si, k = (int(x) for x in np.unravel_index(int(flat), self.shape))
        row = int(flat) // self.shape[4]
        wall, p90_wall = float(self.wall[row]), float(self.p90_wall[row])
        if k == int(self.arg[row]):
            return float(self.best_total[row]), wall, float(self.best_p90[row]), p90_wall
        if (ni, oi) not in self.bases:
            return math.inf, wall, math.inf, p90_wall
        costs = self._costs(ni, oi, ii, si)
        return float(costs[k, 0]), wall, float(costs[k, 1]), p90_wall


def _validate(
    deadline_hours: float | None,
    budget_usd: float | None,
    clouds: Sequence[str] | None,
    space: SearchSpace,
) -> tuple[str, ...] | None:
    if deadline_hours is not None and not deadline_hours > 0:
        msg = f"deadline must be > 0 hours (got {deadline_hours:g})"
        raise SpecError(msg, field="deadline_hours")
    if budget_usd is not None and not budget_usd > 0:
        msg = f"budget must be > 0 USD (got {budget_usd:g})"
        raise SpecError(msg, field="budget_usd")
    allowed = _validate_clouds(clouds)
    _validate_space(space)
    return allowed


def _validate_clouds(clouds: Sequence[str] | None) -> tuple[str, ...] | None:
    """The clouds to search (None: the plan's own), each one a provider trainbill prices."""
    allowed = tuple(clouds) if clouds is not None else None
    if allowed is not None and not allowed:
        msg = f"no cloud given; allowed values: {', '.join(PROVIDERS)}"
        raise SpecError(msg, field="clouds")
    for c in allowed or ():
        if c not in PROVIDERS:
            msg = f"unknown cloud {c!r}.{suggest(c, PROVIDERS)} Allowed values: {', '.join(PROVIDERS)}"
            raise SpecError(msg, field="clouds")
    return allowed


def _validate_space(space: SearchSpace) -> None:
    """Every axis of the search space within what it can mean, else the axis named."""
    for name, values, lo, hi in (
        ("spot_fractions", space.spot_fractions, 0.0, 1.0),
        ("coverages", space.coverages, 0.0, 1.0),
    ):
        if any(not lo <= v <= hi for v in values):
            msg = f"values must lie in [{lo:g}, {hi:g}] (got {list(values)})"
            raise SpecError(msg, field=f"space.{name}")
    if any(v <= 0 for v in space.checkpoint_intervals_hours):
        msg = (
            f"checkpoint intervals must be > 0 hours (got {list(space.checkpoint_intervals_hours)})"
        )
        raise SpecError(msg, field="space.checkpoint_intervals_hours")
    if space.nodes is not None and any(n < 1 for n in space.nodes):
        msg = f"node counts must be >= 1 (got {list(space.nodes)})"
        raise SpecError(msg, field="space.nodes")
    for term in space.savings_plans or ():
        if term not in {"none", "1yr", "3yr"}:
            msg = f"unknown Savings Plan term {term!r}; allowed values: none, 1yr, 3yr"
            raise SpecError(msg, field="space.savings_plans")
    known = {o for offered in ORCHESTRATORS.values() for o in offered}
    for orch in space.orchestrators:
        if orch not in known:
            msg = f"unknown orchestrator {orch!r}; allowed values: {', '.join(sorted(known))}"
            raise SpecError(msg, field="space.orchestrators")


def _stand_in_reason(inst: Instance, catalog: Catalog, region: str, as_of: date) -> str | None:
    """Why an instance is a stand-in (not sold as the catalog prices it), or None.

    Either the instance itself is a catalog stand-in (an H800 node no cloud lists) or the
    on-demand price the search would use is (trn2.48xlarge has no On-Demand SKU).
    """
    if inst.stand_in:
        return f"catalog stand-in, not an instance a cloud sells ({inst.source})"
    point = catalog.find_price(
        inst.instance, "on_demand", provider=inst.provider, region=region, as_of=as_of
    )
    if point is not None and point.stand_in:
        return f"its on-demand price is a catalog stand-in, not a published price ({point.source})"
    return None


def _instances(
    plan: Plan,
    catalog: Catalog,
    space: SearchSpace,
    clouds: tuple[str, ...] | None,
    *,
    allow_stand_ins: bool,
    today: date | None,
) -> tuple[list[Instance], list[str]]:
    """The instances to search, and a note for each one left out.

    Named instances are searched as named (a stand-in among them needs ``allow_stand_ins``).
    Otherwise named clouds are searched whole; with no clouds named, only the plan's own cloud
    and accelerator vendor (the family its code already runs on). Stand-ins are left out unless
    ``allow_stand_ins``; the plan's own instance is always a candidate.
    """
    user_inst, _ = resolve_cluster(plan, catalog)
    as_of = plan.prices.as_of or today or date.today()  # noqa: DTZ011 - a calendar date, not a time

    def region_of(inst: Instance) -> str:
        same = inst.provider == plan.cluster.provider and plan.cluster.region is not None
        return str(plan.cluster.region) if same else catalog.reference_region(inst.provider)

    notes: list[str] = []
    if space.instances is not None:
        out = [catalog.instance(name) for name in space.instances]
        if not allow_stand_ins:
            for inst in out:
                why = _stand_in_reason(inst, catalog, region_of(inst), as_of)
                if why is not None and inst.instance != user_inst.instance:
                    msg = f"{inst.instance}: {why}; pass --allow-stand-ins to search it anyway"
                    raise SpecError(msg, field="instances")
        if clouds is not None:
            out = [i for i in out if i.provider in clouds]
    elif clouds is not None:
        out = [i for i in catalog.instances.values() if i.provider in clouds]
    else:
        vendor = catalog.accelerator(user_inst.accelerator).vendor
        out = [
            i
            for i in catalog.instances.values()
            if i.provider == user_inst.provider
            and catalog.accelerator(i.accelerator).vendor == vendor
        ]
    if not allow_stand_ins:
        kept = []
        for inst in out:
            why = _stand_in_reason(inst, catalog, region_of(inst), as_of)
            if why is None or inst.instance == user_inst.instance:
                kept.append(inst)
            else:
                notes.append(
                    f"{inst.instance}: not searched ({why}; --allow-stand-ins to include it)"
                )
        out = kept
    if user_inst.instance not in {i.instance for i in out}:
        out.append(user_inst)
    return out, notes


#: What moving the code to another accelerator vendor takes, by the vendor moved to.
_PORTING = {
    "google": "porting to TPU: the training code must run on JAX or PyTorch/XLA; CUDA kernels "
    "(FlashAttention, fused optimizers) and NCCL do not carry over",
    "aws": "porting to AWS Trainium: the training code must run on the Neuron SDK (PyTorch "
    "NeuronX or JAX); CUDA kernels do not carry over",
    "amd": "porting to AMD ROCm: PyTorch runs, but custom CUDA kernels need HIP ports and NCCL becomes RCCL",
    "nvidia": "porting to NVIDIA CUDA: the training code must leave its current accelerator's toolchain",
}


def _caveats(
    c: Candidate, user_inst: Instance, user_spot_nodes: float, catalog: Catalog, as_of: date
) -> tuple[Caveat, ...]:
    """What ``c`` changes against the user's plan beyond its price (see ``Caveat``)."""
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
        text = (f"moves the run from {user_inst.provider} to {c.provider}: another account, quotas and capacity "
                f"requests there, and the training data and checkpoints copied across clouds")  # fmt: skip
        out.append(Caveat(kind="cloud", text=text))
    if acc.launched is not None and mine.launched is not None and acc.launched < mine.launched:
        text = (f"{acc.name} (launched {acc.launched}) is an older generation than {mine.name} "
                f"({mine.launched}): dense BF16 peak {acc.peak_bf16_tflops:g} vs {mine.peak_bf16_tflops:g} TFLOP/s"
                f"{'' if acc.peak_fp8_tflops is not None or mine.peak_fp8_tflops is None else ', no FP8'}")  # fmt: skip
        out.append(Caveat(kind="older_gpu", text=text))
    if acc.hbm_gb < mine.hbm_gb:
        text = (f"{acc.hbm_gb:g} GB of memory per accelerator vs {mine.hbm_gb:g} GB: the parallel layout "
                f"(tensor/pipeline split, micro-batch, activation recompute) must be re-tuned to fit")  # fmt: skip
        out.append(Caveat(kind="memory", text=text))
    spot_nodes = c.spot_fraction * c.nodes
    if spot_nodes > user_spot_nodes:
        row = catalog.spot_row(c.instance, provider=c.provider, region=c.region, as_of=as_of)
        seen = (f"Spot Advisor: {row.interruption_bucket} of these instances interrupted per month in {c.region} "
                f"(observed {row.observed})" if row is not None else
                f"no spot interruption data for {c.instance} in {c.region}")  # fmt: skip
        text = (f"{spot_nodes:g} of {c.nodes} nodes on spot (the plan: {user_spot_nodes:g}): {c.provider} does "
                f"not guarantee spot capacity, and {spot_nodes:g} × {c.instance} at once may not be available; "
                f"{seen}")  # fmt: skip
        out.append(Caveat(kind="spot_capacity", text=text))
    return tuple(out)


def _axes_for(
    plan: Plan,
    catalog: Catalog,
    space: SearchSpace,
    inst: Instance,
    chosen_interval: float | None = None,
) -> _Axes:
    """The search grid for one instance; ``chosen_interval`` is the checkpoint interval the user's
    plan is forecast with (stated, or the Young/Daly optimum), so the plan itself is a grid point."""
    user_inst, user_nodes = resolve_cluster(plan, catalog)
    is_user = inst.instance == user_inst.instance
    nodes = set(space.nodes if space.nodes is not None else _default_nodes(plan, catalog, inst))
    offered = ORCHESTRATORS[
        inst.provider
    ]  # offered[0]: self-managed VMs ("ec2" on AWS, "vm" elsewhere)
    named = [orchestrator_on(inst.provider, o) for o in space.orchestrators]
    orchs = [o for o in named if o in offered] or [offered[0]]
    if is_user:
        nodes.add(user_nodes)
        user_orch = orchestrator_on(inst.provider, plan.cluster.orchestrator)
        if user_orch not in orchs:
            orchs.append(user_orch)
    user_interval = (
        plan.checkpoint.interval_hours
        or chosen_interval
        or float(catalog.value("defaults.checkpoint.interval_hours"))
    )
    intervals = _sorted_unique([*space.checkpoint_intervals_hours, user_interval])
    spots = _sorted_unique([*space.spot_fractions, plan.purchase.spot_fraction])
    terms = (
        space.savings_plans if space.savings_plans is not None else (plan.purchase.savings_plan,)
    )
    sp = [_SpOption(term="none", coverage=0.0)]
    user_cov = plan.purchase.savings_plan_coverage
    for term in dict.fromkeys(terms):
        if term == "none":
            continue
        covs = set(space.coverages)
        if term == plan.purchase.savings_plan:
            covs.add(1.0 if user_cov is None else user_cov)
        sp.extend(_SpOption(term=term, coverage=c) for c in sorted(covs) if c > 0)
    return _Axes(
        nodes=tuple(sorted(nodes)),
        orchestrators=tuple(dict.fromkeys(orchs)),
        intervals=intervals,
        spots=spots,
        sp=tuple(sp),
    )


def _base_usage(
    plan: Plan,
    catalog: Catalog,
    inst: Instance,
    nodes: int,
    orchestrator: str,
    interval: float,
    region: str | None,
    today: date | None,
    jobs: dict[str, Job],
) -> Usage:
    """The real ``usage_for`` of one (instance, node count, orchestrator), all nodes on spot (so
    the reclaim hazard is known; ``with_schedule`` sets each grid point's share) and no
    commitment (``_Pricer`` sets each option's).

    The job (cluster, region, data placement, commitment kind, warnings) is resolved once per
    orchestrator in ``jobs`` and shared by every node count: a candidate plan states its node
    count (never a GPU count to round), so nothing ``resolve_job`` works out depends on it.
    """
    cand = candidate_plan(
        plan,
        catalog,
        instance=inst.instance,
        nodes=nodes,
        orchestrator=orchestrator,
        spot_fraction=1.0,
        savings_plan="none",
        savings_plan_coverage=0.0,
        checkpoint_interval_hours=interval,
        region=region,
    )
    job = jobs.get(orchestrator)
    if job is None:
        job = jobs[orchestrator] = resolve_job(cand, catalog, today=today)
    return usage_for(cand, catalog, job=replace(job, nodes=nodes))


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

    def add(self, ni: int, oi: int, sched: Usage, costs: FloatArray) -> None:
        """Reduce one chunk's costs (K options, [expected, P90], I, S) along the options."""
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

    Per (node count, orchestrator): the real ``usage_for`` (time model, checkpoint stall,
    interruption rates), then the interval × spot grid by ``Usage.with_schedule`` on arrays and
    every Savings Plan option by ``costs.price_arrays`` in one pass; the chunk is reduced per
    row at once, so memory is bounded by one chunk. Node counts that cannot hold the model
    (the time model's memory test, or ``_fits``) are no candidates.
    """
    region = plan.cluster.region if inst.provider == plan.cluster.provider else None
    iv, sp = np.array(axes.intervals), np.array(axes.spots)
    rows = _Rows(
        shape=(len(axes.nodes), len(axes.orchestrators), iv.size, sp.size),
        use_p90=use_p90,
        budget=budget,
    )
    pricer = _Pricer(catalog=catalog, inst=inst, axes=axes)
    bases: dict[tuple[int, int], Usage] = {}
    jobs: dict[str, Job] = {}
    too_small: MemoryFitError | None = None
    for ni, nodes in enumerate(axes.nodes):
        for oi, orch in enumerate(axes.orchestrators):
            try:
                base = _base_usage(plan, catalog, inst, nodes, orch, iv[0], region, today, jobs)
            except MemoryFitError as exc:
                too_small = exc
                break
            if not _fits(base, catalog):
                break
            bases[ni, oi] = base
            costs, sched = pricer.price(base, iv, sp)
            rows.add(ni, oi, sched, costs)
    if not bases and too_small is not None:
        raise too_small
    block = _Block(
        inst=inst,
        region=next(iter(bases.values())).region if bases else str(region or ""),
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


def _candidate(block: _Block, flat: int) -> Candidate:
    a = block.axes
    n, o, i, s, k = np.unravel_index(
        flat, (len(a.nodes), len(a.orchestrators), len(a.intervals), len(a.spots), len(a.sp))
    )
    nodes = a.nodes[int(n)]
    total, wall, p90, p90_wall = block.point(flat)
    return Candidate(
        provider=block.inst.provider,
        region=block.region,
        instance=block.inst.instance,
        accelerator=block.inst.accelerator,
        nodes=nodes,
        gpus=nodes * block.inst.accelerator_count,
        orchestrator=a.orchestrators[int(o)],
        spot_fraction=a.spots[int(s)],
        savings_plan=a.sp[int(k)].term,
        savings_plan_coverage=a.sp[int(k)].coverage,
        checkpoint_interval_hours=a.intervals[int(i)],
        total_usd=total,
        wall_hours=wall,
        p90_usd=p90,
        p90_wall_hours=p90_wall,
    )


def _pareto_indices(cost: FloatArray, wall: FloatArray) -> npt.NDArray[np.intp]:
    """Indices of the cost/time Pareto front (no other point is both cheaper and faster)."""
    if cost.size == 0:
        return np.zeros(0, dtype=np.intp)
    order = np.lexsort((cost, wall))
    c = cost[order]
    best_before = np.minimum.accumulate(np.concatenate(([np.inf], c[:-1])))
    return np.asarray(order[c < best_before], dtype=np.intp)


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
) -> list[_Block]:
    """Every instance's block; an instance with no price or no node count that holds the
    model is left out with a note in ``skipped``."""
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
    if not blocks:
        why = "; ".join(skipped[:3]) if skipped else "no instance of the chosen clouds"
        msg = f"no instance could be searched ({len(skipped)} skipped: {why})"
        raise SpecError(msg, field="clouds")
    return blocks


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
    front: list[Candidate] = field(default_factory=list)
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
        self.front.extend(
            _candidate(b, int(rows[k]) * nsp + int(b.arg[rows[k]]))
            for k in _pareto_indices(b.best[rows], wall[rows])
        )

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


def _check_not_empty(space: SearchSpace) -> None:
    for name in ("spot_fractions", "checkpoint_intervals_hours", "orchestrators"):
        if not getattr(space, name):
            msg = "the search space is empty: give at least one value"
            raise SpecError(msg, field=f"space.{name}")
    if space.nodes is not None and not space.nodes:
        msg = "the search space is empty: give at least one node count"
        raise SpecError(msg, field="space.nodes")
    if space.instances is not None and not space.instances:
        msg = "the search space is empty: give at least one instance type"
        raise SpecError(msg, field="space.instances")


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
) -> Candidate:
    """The grid's winner, or the user's own plan when it is feasible and no worse (ties: the
    plan as written)."""
    if best is None:
        assert feasible_user is not None  # the caller raised otherwise
        return feasible_user
    chosen = _candidate(blocks[best[2]], best[3])
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
        objective: "expected" (forecast's total) or "p90" (normal approximation; module doc).
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
    if objective not in {"expected", "p90"}:
        msg = f"unknown objective {objective!r}; allowed values: expected, p90"
        raise SpecError(msg, field="objective")
    deadline = deadline_hours if deadline_hours is not None else plan.run.deadline_hours
    allowed = _validate(deadline, budget_usd, clouds, space)
    _check_not_empty(space)
    _check_template(plan, catalog, today)
    use_p90 = objective == "p90"
    skipped: list[str] = []
    user: Candidate | None
    try:
        user = _user_candidate(plan, catalog, today)
    except MemoryFitError as exc:
        user = None  # the plan as written cannot run; a larger searched cluster may
        skipped.append(f"your plan: not a candidate ({exc})")
    instances, left_out = _instances(
        plan, catalog, space, allowed, allow_stand_ins=allow_stand_ins, today=today
    )
    skipped.extend(left_out)
    interval = user.checkpoint_interval_hours if user is not None else None
    blocks = _evaluate_all(
        plan, catalog, space, instances, interval, today, use_p90, budget_usd, skipped
    )
    evaluated = sum(b.size for b in blocks)
    search = _Search(deadline=deadline, budget=budget_usd, use_p90=use_p90)
    for bi, b in enumerate(blocks):
        search.add(bi, b)
    best, front, feasible, worst = search.best, search.front, search.feasible, search.worst

    user_ok = user is not None and _user_feasible(user, deadline, budget_usd, use_p90)
    if best is None and (user is None or not user_ok):
        raise _infeasible(worst, deadline, budget_usd, use_p90)
    chosen = _choose(blocks, best, user if user_ok else None, use_p90)
    best_plan = (
        plan
        if chosen.is_user_plan
        else candidate_plan(
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
        )
    )
    pareto_all = (
        [*front, user]
        if user is not None and _user_feasible(user, None, budget_usd, use_p90)
        else front
    )
    costs = np.array([_key(c, use_p90)[0] for c in pareto_all])
    walls = np.array([_key(c, use_p90)[1] for c in pareto_all])
    pareto = tuple(pareto_all[int(k)] for k in _pareto_indices(costs, walls))
    rows = _rightsizing(blocks, chosen, use_p90)
    user_inst, _ = resolve_cluster(plan, catalog)
    as_of = plan.prices.as_of or today or date.today()  # noqa: DTZ011 - a calendar date, not a time
    spot_nodes = plan.purchase.spot_fraction * (user.nodes if user is not None else 0)

    def noted(c: Candidate) -> Candidate:
        return replace(c, caveats=_caveats(c, user_inst, spot_nodes, catalog, as_of))

    chosen = noted(chosen)
    pareto = tuple(noted(c) for c in pareto)
    user = noted(user) if user is not None else None
    return OptimizationResult(
        best=chosen,
        best_plan=best_plan,
        user=user,
        pareto=pareto,
        rightsizing=rows,
        evaluated=evaluated + 1,
        feasible=feasible + int(user_ok),
        elapsed_s=time.perf_counter() - started,
        objective=objective,
        deadline_hours=deadline,
        budget_usd=budget_usd,
        skipped=tuple(skipped),
    )


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
        msg = "no candidate cluster holds the model's training state in GPU memory; add larger node counts"
        return InfeasibleError(msg, binding="memory")
    if deadline is not None and worst["min_wall"] > deadline:
        short = worst["min_wall"] - deadline
        msg = (
            f"nothing meets the deadline of {deadline:,.1f} h: the fastest plan searched takes "
            f"{worst['min_wall']:,.1f} h ({what}wall-clock), {short:,.1f} h ({short / deadline:.0%}) over. "
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
        k = a.sp.index(_SpOption(term=best.savings_plan, coverage=best.savings_plan_coverage))
    except ValueError:
        return ()
    shape = (len(a.nodes), len(a.orchestrators), len(a.intervals), len(a.spots), len(a.sp))
    points: list[tuple[int, float, float]] = []  # (nodes, cost, wall) of every count that fits
    for n_idx, nodes in enumerate(a.nodes):
        flat = int(np.ravel_multi_index((n_idx, o, i, s, k), shape))
        if not block.row_ok[flat // len(a.sp)]:
            continue
        total, exp_wall, p90, p90_wall = block.point(flat)
        if not math.isfinite(total):
            continue
        points.append((nodes, p90 if use_p90 else total, p90_wall if use_p90 else exp_wall))
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
