"""Planner: the cheapest instance, cluster size, cloud, purchase mix and checkpoint interval.

The article's advice (right-size, buy Savings Plans for the baseline, use spot when
interruptions are tolerable, consider other clouds) as a search instead of opinions.

How the search stays consistent with ``forecast`` while evaluating millions of candidates:

* **Time side.** For every (instance, node count) the real ``usage_for`` is called on two
  reference plans (two checkpoint intervals, all nodes on spot). From them come the pure
  compute hours, the synchronization stall, the evaluation hours, the checkpoint write stall, the failure and reclaim
  rates per exposed hour and the loss per event as an affine function of the interval; one
  ``usage_for`` per orchestrator gives its restart time. The grid over interval × spot share ×
  orchestrator is then composed in NumPy. A random sample of grid points is re-derived with
  ``usage_for`` and compared; a mismatch (e.g. the time model changed shape) raises instead of
  returning a wrong plan.
* **Price side.** The cost drivers are linear in the usage quantities. For every (instance,
  orchestrator, Savings Plan term) the real ``costs.estimate`` prices a dozen synthetic usages
  (random nodes, spot share, coverage, hours, checkpoint count) and a least-squares fit recovers
  the coefficients of twelve features (1, W, N·W, N·s·W, N·c·W, N·c·s·W, checkpoints, retained
  checkpoints, retained·W, N, N·c, N·c·s; W wall hours, N nodes, s spot share, c coverage; the
  last two carry a Savings Plan bought for the run, billed for its whole term). Held-out probes
  must match to 1e-9 relative or the planner raises.

Objective and constraints (minimise over the grid)::

    objective   = expected total (forecast's total_usd)            default
                | P90 total (normal approximation, below)           objective="p90"
    subject to  wall hours (P90 wall hours with "p90") <= deadline_hours
                objective cost <= budget_usd
                model state fits the cluster's HBM (when the model size is known)

P90: failures and reclaims are Poisson with the expected counts m the forecast uses; each loses
restart + U(0, interval) hours, so the lost hours have variance m·(L² + I²/12) (compound
Poisson, L the mean loss per event). P90 = mean + 1.2816·sd, for wall hours and for cost (the
sd in hours times the marginal cost of a wall hour). The normal approximation is rough when m
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
from trainbill.costs import estimate
from trainbill.errors import CatalogError, InfeasibleError, SpecError, TrainbillError, suggest
from trainbill.forecast import forecast
from trainbill.memory import MemoryFitError
from trainbill.spec import MAX_NODES, ORCHESTRATORS, Plan, orchestrator_on, plan_from_dict
from trainbill.usage import Usage, instance_family, resolve_cluster, usage_for

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
        spot_fractions=(usage.spot_fraction,),
        savings_plans=(usage.savings_plan,),
        coverages=(usage.savings_plan_coverage,)
        if usage.savings_plan != "none"
        else defaults.coverages,
        orchestrators=(usage.orchestrator,),
        checkpoint_intervals_hours=(usage.checkpoint_interval_hours,)
        if usage.checkpoint_interval_hours > 0
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


def _features(
    n: FloatArray, s: FloatArray, c: FloatArray, w: FloatArray, count: FloatArray, kept: FloatArray
) -> list[FloatArray]:
    """The twelve price features; every driver's total is linear in these."""
    nw = n * w
    one = np.ones_like(w)
    return [
        one,
        w,
        nw,
        nw * s,
        nw * c,
        nw * c * s,
        count,
        kept,
        kept * w,
        n * one,
        n * c * one,
        n * c * s * one,
    ]


def _kept(count: FloatArray, keep_last: int) -> FloatArray:
    """Checkpoints retained in S3: min(keep_last, max(count, 1)), as the checkpoint driver."""
    return np.minimum(float(keep_last), np.maximum(count, 1.0))


def _usage_total(u: Usage, catalog: Catalog) -> float:
    return estimate(u, catalog).total_usd


def _probe_usage(
    ref: Usage, rng: np.random.Generator, j: int, *, spot: bool, coverage: bool
) -> Usage:
    """A synthetic usage with random quantities, for fitting and checking price coefficients.

    Checkpoint counts cycle through values below 1, between 1 and ``keep_last`` and above it,
    so the retained-checkpoint feature is never confounded with the constant.
    """
    hc = float(rng.uniform(1.0, 500.0))
    step = (max(ref.keep_last, 1) + 2.0) / 4.0
    count = (
        0.25 + (j % 8) * step + float(rng.uniform(0.0, 0.1)) if ref.checkpoint_size_gb > 0 else 0.0
    )
    return replace(
        ref,
        nodes=int(rng.integers(1, 200)),
        spot_fraction=float(rng.uniform(0.0, 1.0)) if spot else 0.0,
        savings_plan_coverage=float(rng.uniform(0.0, 1.0)) if coverage else 0.0,
        compute_hours=hc,
        sync_stall_hours=hc * float(rng.uniform(0.0, 0.3))
        if ref.time.sync_stall_fraction > 0
        else 0.0,
        checkpoint_count=count,
        checkpoint_stall_hours=float(rng.uniform(0.0, 20.0)) if count else 0.0,
        failure_lost_hours=float(rng.uniform(0.0, 30.0))
        if ref.failure_rate_per_gpu_day > 0
        else 0.0,
        reclaim_lost_hours=float(rng.uniform(0.0, 30.0)) if spot else 0.0,
    )


def _probe_features(u: Usage) -> FloatArray:
    arr = _features(
        np.array([float(u.nodes)]),
        np.array([u.spot_fraction]),
        np.array([u.savings_plan_coverage]),
        np.array([u.wall_hours]),
        np.array([u.checkpoint_count]),
        _kept(np.array([u.checkpoint_count]), u.keep_last),
    )
    return np.array([a[0] for a in arr])


def _fit_prices(
    ref: Usage, catalog: Catalog, *, spot: bool, rng: np.random.Generator
) -> FloatArray:
    """Least-squares price coefficients for one (instance, orchestrator, term), checked."""
    coverage = ref.savings_plan != "none"
    probes = [
        _probe_usage(ref, rng, j, spot=spot, coverage=coverage) for j in range(_PROBES + _HOLDOUT)
    ]
    x = np.array([_probe_features(u) for u in probes])
    y = np.array([_usage_total(u, catalog) for u in probes])
    coef, *_ = np.linalg.lstsq(x[:_PROBES], y[:_PROBES], rcond=None)
    pred = x[_PROBES:] @ coef
    err = np.abs(pred - y[_PROBES:]) / np.maximum(np.abs(y[_PROBES:]), 1.0)
    if float(err.max()) > _REL_TOL:
        msg = (
            f"optimizer price model disagrees with the cost drivers for {ref.instance.instance} "
            f"({ref.orchestrator}, {ref.savings_plan}): relative error {float(err.max()):.2e}. "
            "A driver is no longer linear in the optimizer's features; update trainbill.optimize._features."
        )
        raise RuntimeError(msg)
    return np.asarray(coef, dtype=np.float64)


@dataclass(frozen=True, slots=True, kw_only=True)
class _TimeCoef:
    """Per node count: the quantities the time grid is composed from (see module docstring)."""

    compute: FloatArray  # H_c
    sync: FloatArray  # H_s
    evaluation: FloatArray  # H_e: validation passes (independent of interval and spot)
    ck_each: FloatArray  # write stall per checkpoint
    ck_per_hour: FloatArray  # checkpoints per compute hour per (1/interval): 1 if size > 0
    fail_rate: FloatArray  # failures per exposed hour
    reclaim_rate: FloatArray  # reclaims per exposed hour per unit spot share
    loss_slope: float  # loss per event = restart(orchestrator) + slope × interval
    restart: FloatArray  # per orchestrator
    fits: npt.NDArray[np.bool_]  # model state fits in HBM
    ref_nodes: int  # the largest node count that fits: reference for restart and price fits


def _time_coefficients(
    plan: Plan,
    catalog: Catalog,
    inst: Instance,
    axes: _Axes,
    region: str | None,
    today: date | None,
) -> _TimeCoef:
    i0, i1 = 1.0, 4.0
    cols: dict[str, list[float]] = {
        k: [] for k in ("hc", "hs", "he", "each", "kph", "fr", "rr", "slope", "fits")
    }
    fitting: list[int] = []
    too_small: MemoryFitError | None = None
    for n in axes.nodes:
        try:
            us = [
                usage_for(
                    candidate_plan(
                        plan,
                        catalog,
                        instance=inst.instance,
                        nodes=n,
                        orchestrator=axes.orchestrators[0],
                        spot_fraction=1.0,
                        savings_plan="none",
                        savings_plan_coverage=0.0,
                        checkpoint_interval_hours=iv,
                        region=region,
                    ),
                    catalog,
                    today=today,
                )
                for iv in (i0, i1)
            ]
        except MemoryFitError as exc:
            # Too few accelerators for this model at this count (the time model's memory test):
            # not a candidate. Placeholder zeros keep the grid's shape; ``fits`` masks the row.
            too_small = exc
            for key, values in cols.items():
                if key != "slope":
                    values.append(0.0)
            continue
        fitting.append(n)
        u = us[0]
        cols["hc"].append(u.compute_hours)
        cols["hs"].append(u.sync_stall_hours)
        cols["he"].append(u.eval_hours)
        cols["each"].append(u.checkpoint_stall_hours_each)
        cols["kph"].append(u.checkpoint_count * i0 / u.compute_hours if u.compute_hours else 0.0)
        cols["fr"].append(u.failure_events / u.exposed_hours)
        cols["rr"].append(u.reclaim_events / u.exposed_hours)
        events = [x.failure_events + x.reclaim_events for x in us]
        if events[0] > 0 and events[1] > 0:
            loss = [
                (x.failure_lost_hours + x.reclaim_lost_hours) / e
                for x, e in zip(us, events, strict=True)
            ]
            cols["slope"].append((loss[1] - loss[0]) / (i1 - i0))
        cols["fits"].append(1.0 if _fits(u, catalog) else 0.0)
    if not fitting:
        assert too_small is not None
        raise too_small
    ref_nodes = fitting[-1]
    restart = []
    for orch in axes.orchestrators:
        u = usage_for(
            candidate_plan(
                plan,
                catalog,
                instance=inst.instance,
                nodes=ref_nodes,
                orchestrator=orch,
                spot_fraction=0.0,
                savings_plan="none",
                savings_plan_coverage=0.0,
                checkpoint_interval_hours=i0,
                region=region,
            ),
            catalog,
            today=today,
        )
        restart.append(u.restart_hours)
    slope = float(np.median(cols["slope"])) if cols["slope"] else 0.5
    return _TimeCoef(
        compute=np.array(cols["hc"]),
        sync=np.array(cols["hs"]),
        evaluation=np.array(cols["he"]),
        ck_each=np.array(cols["each"]),
        ck_per_hour=np.array(cols["kph"]),
        fail_rate=np.array(cols["fr"]),
        reclaim_rate=np.array(cols["rr"]),
        loss_slope=slope,
        restart=np.array(restart),
        fits=np.array(cols["fits"]) > 0.5,
        ref_nodes=ref_nodes,
    )


def _fits(u: Usage, catalog: Catalog) -> bool:
    """Weights, gradients and Adam state, fully sharded, fit the cluster's HBM (forecast's test)."""
    if u.params is None:
        return True
    need = u.params * float(catalog.value("time.model_state_bytes_per_param")) / 1e9
    return need <= u.gpus * u.accelerator.hbm_gb


@dataclass(frozen=True, slots=True, kw_only=True)
class _TimeGrid:
    """Shape (nodes, orchestrators, intervals, spots)."""

    wall: FloatArray
    count: FloatArray
    events: FloatArray
    loss: FloatArray


def _compose_time(tc: _TimeCoef, axes: _Axes) -> _TimeGrid:
    iv = np.array(axes.intervals)[None, None, :, None]
    s = np.array(axes.spots)[None, None, None, :]
    hc = tc.compute[:, None, None, None]
    count = hc * tc.ck_per_hour[:, None, None, None] / iv
    exposed = hc + tc.sync[:, None, None, None] + tc.evaluation[:, None, None, None]
    exposed = exposed + count * tc.ck_each[:, None, None, None]
    events = exposed * (
        tc.fail_rate[:, None, None, None] + tc.reclaim_rate[:, None, None, None] * s
    )
    loss = tc.restart[None, :, None, None] + tc.loss_slope * iv
    wall = exposed + events * loss
    shape = (len(axes.nodes), len(axes.orchestrators), len(axes.intervals), len(axes.spots))
    return _TimeGrid(
        wall=np.broadcast_to(wall, shape),
        count=np.broadcast_to(count, shape),
        events=np.broadcast_to(events, shape),
        loss=np.broadcast_to(loss, shape),
    )


def _check_time(
    plan: Plan,
    catalog: Catalog,
    inst: Instance,
    axes: _Axes,
    grid: _TimeGrid,
    region: str | None,
    today: date | None,
    rng: np.random.Generator,
    fits: npt.NDArray[np.bool_],
) -> None:
    """Re-derive a few grid points with ``usage_for``; raise if the composition drifted.

    Only node counts that fit are checked: the others are no candidates (``usage_for`` refuses them).
    """
    rows = np.flatnonzero(fits)
    if rows.size == 0:
        return
    for _ in range(_TIME_CHECKS):
        idx = (
            int(rows[int(rng.integers(0, rows.size))]),
            *(int(rng.integers(0, k)) for k in grid.wall.shape[1:]),
        )
        n, o, i, s = idx
        u = usage_for(
            candidate_plan(
                plan,
                catalog,
                instance=inst.instance,
                nodes=axes.nodes[n],
                orchestrator=axes.orchestrators[o],
                spot_fraction=axes.spots[s],
                savings_plan="none",
                savings_plan_coverage=0.0,
                checkpoint_interval_hours=axes.intervals[i],
                region=region,
            ),
            catalog,
            today=today,
        )
        got = float(grid.wall[idx])
        if abs(got - u.wall_hours) > _REL_TOL * max(u.wall_hours, 1.0):
            msg = (
                f"optimizer time model disagrees with usage_for for {inst.instance} × {axes.nodes[n]}: "
                f"{got} vs {u.wall_hours} wall hours; update trainbill.optimize._compose_time."
            )
            raise RuntimeError(msg)


# --- the search ------------------------------------------------------------------------------
@dataclass(slots=True)
class _Block:
    """One instance's evaluated grid, kept per row rather than per configuration.

    A row is one (nodes, orchestrator, interval, spot share) point; the Savings Plan axis (last
    in the flat order) only scales the coverage-dependent price features, so every
    configuration's cost is ``base[row, term] + coverage × slope[row, term]`` (same for P90 with
    ``base90``/``slope90``). The search computes that for every configuration in cache-sized
    chunks and keeps only per-row reductions; ``*_at`` recompute any single point the same way.
    """

    inst: Instance
    region: str
    axes: _Axes
    wall: FloatArray  # (rows,) expected wall hours
    p90_wall: FloatArray  # (rows,)
    row_ok: npt.NDArray[np.bool_]  # (rows,) fits in HBM and spot priced where s > 0
    sp_ok: npt.NDArray[np.bool_]  # (SP,) the option's term has prices
    term_of: npt.NDArray[np.intp]  # (SP,) column of base/slope for the option's term
    cov: FloatArray  # (SP,) coverage of the option (0 for "none")
    base: FloatArray  # (rows, terms)
    slope: FloatArray  # (rows, terms)
    base90: FloatArray  # (rows, terms)
    slope90: FloatArray  # (rows, terms)

    @property
    def size(self) -> int:
        """Configurations in the block (rows × Savings Plan options)."""
        return int(self.wall.size * self.cov.size)

    @property
    def fits(self) -> npt.NDArray[np.bool_]:
        """Flat validity mask over all configurations (flat order nodes, orch, interval, spot, SP)."""
        return np.asarray((self.row_ok[:, None] & self.sp_ok[None, :]).reshape(-1))

    def point(self, flat: int) -> tuple[float, float, float, float]:
        """(total, wall, p90, p90_wall) of one configuration, computed as in the search."""
        row, k = divmod(int(flat), self.cov.size)
        t = int(self.term_of[k])
        cov = float(self.cov[k])
        total = float(self.base[row, t]) + cov * float(self.slope[row, t])
        p90 = float(self.base90[row, t]) + cov * float(self.slope90[row, t])
        return total, float(self.wall[row]), p90, float(self.p90_wall[row])


@dataclass(frozen=True, slots=True, kw_only=True)
class _Reduced:
    """Per-row reduction of one block for one objective (see ``_reduce``)."""

    best: FloatArray  # (rows,) cheapest valid option's objective (inf if none)
    arg: npt.NDArray[np.intp]  # (rows,) its SP index (first on ties)
    within_budget: npt.NDArray[np.int64] | None  # (rows,) valid options with objective <= budget


#: Configurations per evaluation chunk: small enough to stay in L2 cache (≈0.5 MB of float64).
_CHUNK = 1 << 16


def _reduce(block: _Block, use_p90: bool, budget: float | None) -> _Reduced:
    """Evaluate every configuration's objective and reduce along the Savings Plan axis.

    Each chunk of rows is expanded to (rows, SP) objectives in a reused buffer (one multiply
    and one add per configuration), then reduced to the row minimum, its argmin and, with a
    budget, the number of options within it. Options whose term has no price are +inf.
    """
    base = block.base90 if use_p90 else block.base
    slope = block.slope90 if use_p90 else block.slope
    rows, nsp = block.wall.size, block.cov.size
    best = np.empty(rows)
    arg = np.empty(rows, dtype=np.intp)
    within = np.empty(rows, dtype=np.int64) if budget is not None else None
    # Columns of one term are contiguous (``_axes_for`` builds them term by term).
    spans: list[tuple[int, int, int]] = []
    for k in range(nsp):
        t = int(block.term_of[k])
        if spans and spans[-1][2] == t and spans[-1][1] == k:
            spans[-1] = (spans[-1][0], k + 1, t)
        else:
            spans.append((k, k + 1, t))
    step = max(1, _CHUNK // nsp)
    buf_all = np.empty((min(step, rows), nsp))
    for r0 in range(0, rows, step):
        r1 = min(rows, r0 + step)
        buf = buf_all[: r1 - r0]
        for k0, k1, t in spans:
            view = buf[:, k0:k1]
            if not block.sp_ok[k0]:
                view.fill(np.inf)
                continue
            np.multiply(slope[r0:r1, t, None], block.cov[None, k0:k1], out=view)
            view += base[r0:r1, t, None]
        a = np.argmin(buf, axis=1)
        arg[r0:r1] = a
        best[r0:r1] = np.take_along_axis(buf, a[:, None], axis=1)[:, 0]
        if within is not None and budget is not None:
            within[r0:r1] = np.count_nonzero(buf <= budget, axis=1)
    return _Reduced(best=best, arg=arg, within_budget=within)


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
    allowed = tuple(clouds) if clouds is not None else None
    if allowed is not None and not allowed:
        msg = f"no cloud given; allowed values: {', '.join(PROVIDERS)}"
        raise SpecError(msg, field="clouds")
    for c in allowed or ():
        if c not in PROVIDERS:
            msg = f"unknown cloud {c!r}.{suggest(c, PROVIDERS)} Allowed values: {', '.join(PROVIDERS)}"
            raise SpecError(msg, field="clouds")
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
    return allowed


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


def _evaluate_instance(
    plan: Plan,
    catalog: Catalog,
    inst: Instance,
    axes: _Axes,
    today: date | None,
    rng: np.random.Generator,
) -> tuple[_Block, list[str]]:
    """Evaluate one instance's whole grid (nodes × orch × interval × spot × SP) in NumPy."""
    skipped: list[str] = []
    region = plan.cluster.region if inst.provider == plan.cluster.provider else None
    tc = _time_coefficients(plan, catalog, inst, axes, region, today)
    tg = _compose_time(tc, axes)
    _check_time(plan, catalog, inst, axes, tg, region, today, rng, tc.fits)

    # Price coefficients per (orchestrator, term); spot only where a spot price exists.
    terms = tuple(dict.fromkeys(opt.term for opt in axes.sp))
    spot_ok = True
    coef = np.zeros((len(axes.orchestrators), len(terms), _N_FEATURES))
    term_ok = np.ones(len(terms), dtype=bool)
    keep_last = 0
    ref_region = ""
    for o, orch in enumerate(axes.orchestrators):
        for t, term in enumerate(terms):
            ref_plan = candidate_plan(
                plan,
                catalog,
                instance=inst.instance,
                nodes=tc.ref_nodes,
                orchestrator=orch,
                spot_fraction=0.0,
                savings_plan=term,
                savings_plan_coverage=1.0 if term != "none" else 0.0,
                checkpoint_interval_hours=axes.intervals[0],
                region=region,
            )
            ref = usage_for(ref_plan, catalog, today=today)
            keep_last, ref_region = ref.keep_last, ref.region
            try:
                coef[o, t] = _fit_prices(ref, catalog, spot=spot_ok, rng=rng)
            except CatalogError as exc:
                if spot_ok and term == "none":
                    spot_ok = False
                    skipped.append(f"{inst.instance}: spot not searched ({exc})")
                    coef[o, t] = _fit_prices(ref, catalog, spot=False, rng=rng)
                else:
                    term_ok[t] = False
                    coef[o, t] = 0.0
                    skipped.append(f"{inst.instance}: {term} Savings Plan not searched ({exc})")
    term_of = np.array([terms.index(opt.term) for opt in axes.sp], dtype=np.intp)

    # Row features (coverage = 1; it multiplies only the coverage features, so it is applied
    # per configuration as base + coverage × slope) and their derivative in wall hours.
    shp4 = (len(axes.nodes), len(axes.orchestrators), len(axes.intervals), len(axes.spots))
    n = np.broadcast_to(np.array(axes.nodes, dtype=np.float64)[:, None, None, None], shp4)
    s = np.broadcast_to(np.array(axes.spots)[None, None, None, :], shp4)
    kept = _kept(tg.count, keep_last)
    feats = np.stack(
        [np.broadcast_to(f, shp4) for f in _features(n, s, np.ones(1), tg.wall, tg.count, kept)],
        axis=-1,
    )
    zero, one = np.zeros(shp4), np.ones(shp4)
    grads = np.stack(
        [zero, one, n, n * s, n, n * s, zero, zero, np.broadcast_to(kept, shp4), zero, zero, zero],
        axis=-1,
    )
    cov_mask = np.zeros(_N_FEATURES, dtype=bool)
    cov_mask[list(_COVERAGE_FEATURES)] = True
    c_base = np.where(cov_mask, 0.0, coef)  # (O, T, F)
    c_slope = np.where(cov_mask, coef, 0.0)
    base = np.einsum("noisf,otf->noist", feats, c_base)
    slope = np.einsum("noisf,otf->noist", feats, c_slope)
    dbase = np.einsum("noisf,otf->noist", grads, c_base)
    dslope = np.einsum("noisf,otf->noist", grads, c_slope)
    iv = np.array(axes.intervals)[None, None, :, None]
    sd_wall = np.sqrt(tg.events * (tg.loss**2 + iv**2 / 12.0))
    zsd = (P90_Z * sd_wall)[..., None]
    row_ok = np.broadcast_to(tc.fits[:, None, None, None], shp4)
    if not spot_ok:
        row_ok = row_ok & (s == 0)
    nt = len(terms)
    block = _Block(
        inst=inst,
        region=ref_region,
        axes=axes,
        wall=np.ascontiguousarray(tg.wall, dtype=np.float64).reshape(-1),
        p90_wall=(tg.wall + P90_Z * sd_wall).reshape(-1),
        row_ok=np.ascontiguousarray(row_ok).reshape(-1),
        sp_ok=term_ok[term_of],
        term_of=term_of,
        cov=np.array([opt.coverage for opt in axes.sp], dtype=np.float64),
        base=base.reshape(-1, nt),
        slope=slope.reshape(-1, nt),
        base90=(base + zsd * dbase).reshape(-1, nt),
        slope90=(slope + zsd * dslope).reshape(-1, nt),
    )
    return block, skipped


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
    seed: int = 0,
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
        seed: seeds the random probes that fit and check the vectorized model.
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

    # The template's own numbers must be computable: a 1e308 GB volume or a 1e300-hour restart
    # would otherwise surface as a NumPy failure deep in the search. A template that is merely
    # infeasible (no fit in memory at its own size, no price) is fine: the search looks further.
    try:
        forecast(plan, catalog, today=today)
    except SpecError:
        raise
    except TrainbillError:
        pass

    rng = np.random.default_rng(seed)
    blocks: list[_Block] = []
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
    for inst in instances:
        axes = _axes_for(
            plan, catalog, space, inst, user.checkpoint_interval_hours if user is not None else None
        )
        try:
            block, notes = _evaluate_instance(plan, catalog, inst, axes, today, rng)
        except CatalogError as exc:
            skipped.append(f"{inst.instance}: not searched ({exc})")
            continue
        except MemoryFitError as exc:
            # Not one searched node count of this instance holds the model: no candidate here.
            skipped.append(f"{inst.instance}: not searched ({exc})")
            continue
        blocks.append(block)
        skipped.extend(notes)
    if not blocks:
        why = "; ".join(skipped[:3]) if skipped else "no instance of the chosen clouds"
        msg = f"no instance could be searched ({len(skipped)} skipped: {why})"
        raise SpecError(msg, field="clouds")

    use_p90 = objective == "p90"
    evaluated = sum(b.size for b in blocks)
    feasible = 0
    best: tuple[float, float, int, int] | None = None  # (objective, wall, block, index)
    front: list[Candidate] = []
    worst = {"min_wall": math.inf, "min_cost": math.inf, "min_cost_in_time": math.inf}
    for bi, b in enumerate(blocks):
        # Wall hours do not depend on the Savings Plan axis (last), so every question below is
        # answered by each row's cheapest valid option (first on ties, as a stable sort would):
        # the minimum objective, the lexicographic (objective, wall, index) winner and the front.
        red = _reduce(b, use_p90, budget_usd)
        wall = b.p90_wall if use_p90 else b.wall
        nsp = b.cov.size
        ok = b.row_ok & bool(b.sp_ok.any())
        if ok.any():
            worst["min_wall"] = min(worst["min_wall"], float(wall[ok].min()))
            worst["min_cost"] = min(worst["min_cost"], float(red.best[ok].min()))
        in_time = ok
        if deadline is not None:
            in_time = ok & (wall <= deadline)
            if in_time.any():
                worst["min_cost_in_time"] = min(
                    worst["min_cost_in_time"], float(red.best[in_time].min())
                )
        if budget_usd is not None:
            assert red.within_budget is not None
            feasible += int(red.within_budget[in_time].sum())
            feas_rows = in_time & (red.best <= budget_usd)
        else:
            feasible += int(in_time.sum()) * int(b.sp_ok.sum())
            feas_rows = in_time
        if feas_rows.any():
            idx = np.flatnonzero(feas_rows)
            lowest = red.best[idx].min()
            ties = idx[red.best[idx] == lowest]
            r = int(ties[np.argmin(wall[ties])])
            key = (float(lowest), float(wall[r]), bi, r * nsp + int(red.arg[r]))
            if best is None or key[:2] < best[:2]:
                best = key
        on_front = ok & (red.best <= budget_usd) if budget_usd is not None else ok
        cand_rows = np.flatnonzero(on_front)
        front.extend(
            _candidate(b, int(cand_rows[k]) * nsp + int(red.arg[cand_rows[k]]))
            for k in _pareto_indices(red.best[cand_rows], wall[cand_rows])
        )

    user_ok = user is not None and _user_feasible(user, deadline, budget_usd, use_p90)
    if best is None and (user is None or not user_ok):
        raise _infeasible(worst, deadline, budget_usd, use_p90)
    chosen: Candidate
    if best is None:
        assert user is not None  # user_ok
        chosen = user
    else:
        chosen = _candidate(blocks[best[2]], best[3])
        if user is not None and user_ok and _key(user, use_p90) <= _key(chosen, use_p90):
            chosen = user
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
    total = _usage_total(u, catalog)
    bumped = replace(u, failure_lost_hours=u.failure_lost_hours + 1.0)
    dcdw = _usage_total(bumped, catalog) - total
    events = u.failure_events + u.reclaim_events
    loss = (u.failure_lost_hours + u.reclaim_lost_hours) / events if events > 0 else 0.0
    sd = math.sqrt(events * (loss**2 + u.checkpoint_interval_hours**2 / 12.0))
    fits = _fits(u, catalog)
    return Candidate(
        provider=u.provider,
        region=u.region,
        instance=u.instance.instance,
        accelerator=u.accelerator.id,
        nodes=u.nodes,
        gpus=u.gpus,
        orchestrator=u.orchestrator,
        spot_fraction=u.spot_fraction,
        savings_plan=u.savings_plan,
        savings_plan_coverage=u.savings_plan_coverage,
        checkpoint_interval_hours=u.checkpoint_interval_hours,
        total_usd=total,
        wall_hours=u.wall_hours,
        p90_usd=total + P90_Z * sd * dcdw if fits else math.nan,
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
        if not (block.row_ok[flat // len(a.sp)] and block.sp_ok[k]):
            continue
        total, exp_wall, p90, p90_wall = block.point(flat)
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
