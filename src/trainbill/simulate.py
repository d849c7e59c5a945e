"""Monte Carlo of a training run: failures, spot reclaims, restarts, checkpoints, stragglers, spot prices.

The deterministic forecast prices *expected* disruptions. Finance asks for the worst case, so
this module samples the disruptions of many runs and prices every trial with the very same
cost drivers (``trainbill.costs``) as the forecast: it perturbs the ``Usage``, never the code
path. The drivers' arithmetic broadcasts, so a chunk of trials is one ``Usage`` whose sampled
fields (``PERTURBED``) and spot price multiplier (``purchase.spot_price_scale``) are arrays,
priced in one pass by ``costs.price_arrays``: no per-trial Python loop, no fitted or linearised copy of
the drivers, and a trial's cost is what ``forecast_usage`` says for that trial's usage.

Per trial we sample, all vectorized (no Python loop per trial or per event):

* **stragglers**: the step waits for the slowest GPU. Jitter (the expected maximum of N
  Gaussian step times, already in the forecast's sync stall) averages over ≥10⁴ steps, so it
  stays at its expectation; thermal/power **throttling episodes** arrive as a Poisson process
  per GPU-hour (so their cost grows with GPU count), each slowing every step by a fraction for
  a gamma-distributed duration;
* **checkpoint stalls**: each write's stall is gamma-distributed around the forecast's mean
  (a sum of n gammas is one gamma, so one draw per trial);
* **hardware failures**: Poisson(rate × GPUs × exposed hours / 24) per trial;
* **spot reclaims**: Poisson(hazard × spot nodes × exposed hours) per trial;
* per failure or reclaim: work lost since the last checkpoint, uniform within the interval,
  plus a gamma-distributed restart (mean = the plan's restart time);
* **spot price**: uniform within its observed range (one average multiplier per trial).

Randomness: NumPy ``Generator`` only, no global seeding. Trials come in fixed blocks of
``BLOCK`` trials; block b draws from ``SeedSequence(seed).spawn(n_blocks)[b]`` (itself split into
one stream per random component, so scans over checkpoint intervals reuse the same numbers:
common random numbers). Chunks are whole blocks, so results do not depend on ``chunk_size``.
Memory: 16 bytes per trial are kept for exact percentiles (160 MB at the ``MAX_TRIALS`` cap);
everything else is streamed per chunk.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import date
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trainbill.catalog import Catalog
from trainbill.costs import price_arrays
from trainbill.errors import SimulationError
from trainbill.forecast import forecast_usage
from trainbill.ledger import CATEGORIES
from trainbill.spec import Plan
from trainbill.usage import (
    Usage,
    failures_per_hour,
    reclaims_per_hour,
    usage_for,
    young_daly_interval_hours,
)

__all__ = [
    "BLOCK",
    "MAX_TRIALS",
    "PERTURBED",
    "CheckpointStudy",
    "Histogram",
    "Simulation",
    "SimulationParams",
    "SpotComparison",
    "Summary",
    "TrialSamples",
    "checkpoint_study",
    "expected_usage",
    "on_demand_usage",
    "simulate",
    "spot_comparison",
    "spot_range_of_on_demand",
    "with_interval",
    "young_daly_interval",
]

#: Largest accepted trial count: per-trial results take 16 bytes (160 MB at the cap).
MAX_TRIALS = 10_000_000
#: Trials per random-stream block; chunks are whole blocks so chunking cannot change results.
BLOCK = 4096
#: Usage fields a trial samples, by dotted name (``Usage.with_values``; columns of
#: ``TrialSamples.quantities``, in this order).
PERTURBED = (
    "compute.sync_stall_hours",
    "checkpoint.stall_hours",
    "reliability.failure_events",
    "reliability.failure_lost_hours",
    "reliability.reclaim_events",
    "reliability.reclaim_lost_hours",
    "compute.hours",
    "evaluation.hours",
    "checkpoint.count",
)
_QUANTILES = (10, 50, 90, 99)
_STREAMS = 11  # independent random components per block (see _sample_block)
#: Standard normal 90th percentile: a lognormal's P10/P90 are median × exp(∓ this × sigma).
_Z90 = 1.2815515655446004


# --- parameters ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulationParams:
    """Every rate and spread a trial draws from. Rates from the usage; spreads from ``[simulation]``.

    Spot prices are multipliers of the catalog's typical spot price; ``spot_price_low ==
    spot_price_high == 1`` turns price variation off.
    """

    failure_rate_per_gpu_day: float
    spot_reclaim_rate_per_node_hour: float
    restart_hours: float
    restart_cv: float
    checkpoint_stall_cv: float
    spot_price_low: float
    spot_price_high: float
    throttle_rate_per_gpu_hour: float
    throttle_hours_mean: float
    throttle_hours_cv: float
    throttle_slowdown: float
    #: The time model's error: each trial's training and evaluation hours are the forecast's ×
    #: a lognormal multiplier with this median and log-sd, fitted to the P10/P90 of actual /
    #: forecast GPU-hours of published runs predicted leave-one-source-out
    #: (``time.error_band``). 1 and 0 when the plan states its hours (they are the user's).
    time_error_median: float = 1.0
    time_error_sigma: float = 0.0

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, int | float) or math.isnan(v) or math.isinf(v):
                msg = f"simulation parameter {f.name}: must be a finite number (got {v!r})"
                raise SimulationError(msg)
            if v < 0:
                msg = f"simulation parameter {f.name}: must be >= 0 (got {v!r})"
                raise SimulationError(msg)
        if self.spot_reclaim_rate_per_node_hour > 1:
            msg = (
                "simulation parameter spot_reclaim_rate_per_node_hour: a per-hour probability must be <= 1 "
                f"(got {self.spot_reclaim_rate_per_node_hour!r})"
            )
            raise SimulationError(msg)
        if self.throttle_slowdown > 1:
            msg = f"simulation parameter throttle_slowdown: a fraction must be <= 1 (got {self.throttle_slowdown!r})"
            raise SimulationError(msg)
        if not self.time_error_median > 0:
            msg = f"simulation parameter time_error_median: a multiplier must be > 0 (got {self.time_error_median!r})"
            raise SimulationError(msg)
        if self.spot_price_low > self.spot_price_high:
            msg = (
                f"simulation parameters spot_price_low ({self.spot_price_low:g}) > spot_price_high "
                f"({self.spot_price_high:g}); give low <= high"
            )
            raise SimulationError(msg)

    @classmethod
    def from_usage(cls, usage: Usage, catalog: Catalog, **overrides: float) -> SimulationParams:
        """Rates from the usage (plan + assumptions), spreads from ``[simulation]``, then overrides."""
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - allowed)
        if unknown:
            msg = f"unknown simulation parameter(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
            raise SimulationError(msg)
        values: dict[str, float] = {
            "failure_rate_per_gpu_day": usage.reliability.failure_rate_per_gpu_day,
            "spot_reclaim_rate_per_node_hour": usage.reliability.spot_reclaim_rate_per_node_hour,
            "restart_hours": usage.reliability.restart_hours,
            "restart_cv": float(catalog.value("simulation.restart_cv")),
            "checkpoint_stall_cv": float(catalog.value("simulation.checkpoint_stall_cv")),
            "spot_price_low": float(catalog.value("simulation.spot_price_scale_low")),
            "spot_price_high": float(catalog.value("simulation.spot_price_scale_high")),
            "throttle_rate_per_gpu_hour": float(
                catalog.value("simulation.throttle_rate_per_gpu_hour")
            ),
            "throttle_hours_mean": float(catalog.value("simulation.throttle_hours_mean")),
            "throttle_hours_cv": float(catalog.value("simulation.throttle_hours_cv")),
            "throttle_slowdown": float(catalog.value("simulation.throttle_slowdown")),
            **_time_error(usage, catalog),
        }
        values.update({k: float(v) for k, v in overrides.items()})
        return cls(**values)

    def quiet(self) -> SimulationParams:
        """The same parameters with every rate and spread at zero: the simulation becomes the forecast."""
        return replace(
            self,
            failure_rate_per_gpu_day=0.0,
            spot_reclaim_rate_per_node_hour=0.0,
            restart_cv=0.0,
            checkpoint_stall_cv=0.0,
            spot_price_low=1.0,
            spot_price_high=1.0,
            throttle_rate_per_gpu_hour=0.0,
            time_error_median=1.0,
            time_error_sigma=0.0,
        )

    def as_dict(self) -> dict[str, float]:
        """JSON-ready mapping."""
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}


def _time_error(usage: Usage, catalog: Catalog) -> dict[str, float]:
    """Lognormal median and log-sd that reproduce ``time.error_band``'s P10 and P90 exactly."""
    if usage.time.hours_given:
        return {"time_error_median": 1.0, "time_error_sigma": 0.0}
    lo = float(catalog.value("time.error_band.whole_run_p10"))
    hi = float(catalog.value("time.error_band.whole_run_p90"))
    return {
        "time_error_median": math.sqrt(lo * hi),
        "time_error_sigma": (math.log(hi) - math.log(lo)) / (2.0 * _Z90),
    }


# --- pricing trials ----------------------------------------------------------------------------


def _trial_usage(
    usage: Usage, p: SimulationParams, q: NDArray[np.float64], spot: NDArray[np.float64]
) -> Usage:
    """The usage of a block of trials: sampled quantities ``q`` (n, K) and spot multipliers (n,).

    The rates are the simulation's (``p``), so a trial's failures line prices its sampled failures
    even when ``params`` overrides the plan's rate.
    """
    values: dict[str, Any] = {name: q[:, k] for k, name in enumerate(PERTURBED)}
    values["purchase.spot_price_scale"] = spot
    values["reliability.failure_rate_per_gpu_day"] = p.failure_rate_per_gpu_day
    values["reliability.spot_reclaim_rate_per_node_hour"] = p.spot_reclaim_rate_per_node_hour
    values["reliability.restart_hours"] = p.restart_hours
    return usage.with_values(values)


# --- sampling --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialSamples:
    """Per-trial sampled usage quantities and their prices (only kept when asked for)."""

    params: SimulationParams
    spot_scale: NDArray[np.float64]
    quantities: NDArray[np.float64]  # (n, K) sampled values of PERTURBED
    cost_usd: NDArray[np.float64]
    wall_hours: NDArray[np.float64]

    def usage(self, base: Usage, i: int) -> Usage:
        """Trial ``i`` as a single plan's ``Usage`` (``forecast_usage`` prices it to the cent)."""
        one = _trial_usage(
            base, self.params, self.quantities[i : i + 1], self.spot_scale[i : i + 1]
        )
        values: dict[str, Any] = {name: float(one.value(name)[0]) for name in PERTURBED}
        values["purchase.spot_price_scale"] = float(self.spot_scale[i])
        return one.with_values(values)


#: Above this many events in one trial, ``_uniform_sums`` draws the sum's normal approximation.
_EXACT_UNIFORM_SUM = 1000


def _gamma_sum(
    g: np.random.Generator, count: NDArray[Any], mean: float, cv: float
) -> NDArray[np.float64]:
    """Sum of ``count`` iid gamma(mean, cv) durations per trial in one draw (shape adds up)."""
    if mean <= 0:
        return np.zeros(count.shape)
    if cv <= 0:
        return np.asarray(count, dtype=np.float64) * mean
    k = 1.0 / (cv * cv)
    return g.gamma(np.asarray(count, dtype=np.float64) * k, mean / k)


def _uniform_sums(g: np.random.Generator, counts: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per trial, the sum of ``counts[i]`` U(0, 1) draws (one flat draw, grouped by trial).

    Trials with more than ``_EXACT_UNIFORM_SUM`` events use the normal approximation of that
    sum (Irwin-Hall: mean k/2, variance k/12, clipped to [0, k]) so memory stays bounded when a
    huge cluster has thousands of failures per trial; at k = 1000 the two distributions differ
    by far less than the Monte Carlo noise.
    """
    n = counts.size
    big = counts > _EXACT_UNIFORM_SUM
    small = np.where(big, 0, counts)
    total = int(small.sum())
    out: NDArray[np.float64] = np.zeros(n)
    if total:
        u = g.random(total)
        out = np.bincount(np.repeat(np.arange(n), small), weights=u, minlength=n).astype(
            np.float64, copy=False
        )
    if big.any():
        k = counts[big].astype(np.float64)
        out[big] = np.clip(g.normal(k / 2.0, np.sqrt(k / 12.0)), 0.0, k)
    return out


def _sample_block(
    usage: Usage, p: SimulationParams, ss: np.random.SeedSequence, n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Sampled (spot multiplier (n,), PERTURBED quantities (n, K)) for one block of trials."""
    g = [np.random.Generator(np.random.PCG64(s)) for s in ss.spawn(_STREAMS)]
    spot = g[0].uniform(p.spot_price_low, p.spot_price_high, n)
    # The time model's error: the whole run's training (and with it evaluation, the modelled
    # sync and the number of checkpoints) takes k × the forecast's hours.
    if p.time_error_sigma > 0 or p.time_error_median != 1.0:
        k = p.time_error_median * np.exp(p.time_error_sigma * g[10].standard_normal(n))
    else:
        k = np.ones(n)
    compute = usage.compute.hours * k
    evaluation = usage.evaluation.hours * k
    # Stragglers: throttling episodes anywhere in the cluster slow every synchronous step.
    episodes = g[1].poisson(p.throttle_rate_per_gpu_hour * usage.gpus * compute)
    throttled = _gamma_sum(g[2], episodes, p.throttle_hours_mean, p.throttle_hours_cv)
    sync = usage.compute.sync_stall_hours * k + p.throttle_slowdown * throttled
    count = usage.checkpoint.count * k
    ck = _gamma_sum(g[3], count, usage.checkpoint.stall_hours_each, p.checkpoint_stall_cv)
    exposed = compute + evaluation + sync + ck
    interval = usage.checkpoint.interval_hours
    fails = g[4].poisson(failures_per_hour(p.failure_rate_per_gpu_day, usage.gpus) * exposed)
    fail_lost = interval * _uniform_sums(g[5], fails) + _gamma_sum(
        g[6], fails, p.restart_hours, p.restart_cv
    )
    hazard = reclaims_per_hour(
        p.spot_reclaim_rate_per_node_hour, usage.nodes, usage.purchase.spot_fraction
    )
    reclaims = g[7].poisson(hazard * exposed)
    reclaim_lost = interval * _uniform_sums(g[8], reclaims) + _gamma_sum(
        g[9], reclaims, p.restart_hours, p.restart_cv
    )
    q = np.column_stack(
        (
            sync,
            ck,
            fails.astype(np.float64),
            fail_lost,
            reclaims.astype(np.float64),
            reclaim_lost,
            compute,
            evaluation,
            count,
        )
    )
    return spot, q


# --- results ---------------------------------------------------------------------------------


def percentiles(x: NDArray[np.float64], q: Sequence[float] = _QUANTILES) -> tuple[float, ...]:
    """``np.percentile(x, q)`` (its default, linear interpolation), bit for bit, as floats.

    The same steps as NumPy's: ranks ``(n - 1) * q / 100``, one partition around the ranks
    either side of each, then NumPy's two-sided interpolation. NumPy lists those ranks with
    ``np.unique``, whose first call imports ``numpy.ma`` (about 20 ms, a twentieth of a
    ``trainbill forecast`` process, issue #21); a set does it here. Anything but a non-empty
    1-D float64 sample with ``q`` in [0, 100] goes to ``np.percentile`` itself (and its errors).
    """
    n = x.shape[0] if x.ndim == 1 else 0
    if n == 0 or x.dtype != np.float64 or not all(0 <= v <= 100 for v in q):
        return tuple(float(v) for v in np.percentile(x, q))
    rank = (n - 1) * np.true_divide(q, 100)
    below = np.floor(rank)
    above = below + 1
    last = rank >= n - 1  # NumPy takes the largest value there (index -1)
    below[last] = -1
    above[last] = -1
    lo, hi = below.astype(np.intp), above.astype(np.intp)
    kth = np.array(sorted({0, -1, *lo.tolist(), *hi.tolist()}), dtype=np.intp)
    part = np.partition(x, kth)
    a, b = part[lo], part[hi]
    t = rank - lo
    diff = b - a
    out = np.add(a, diff * t)
    np.subtract(b, diff * (1 - t), out=out, where=t >= 0.5)
    if np.isnan(part[-1]):  # a NaN sorts last; NumPy then answers NaN everywhere
        out[:] = part[-1]
    return tuple(float(v) for v in out)


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """Mean and percentiles of a sampled quantity."""

    mean: float
    p10: float
    p50: float
    p90: float
    p99: float

    @classmethod
    def of(cls, x: NDArray[np.float64]) -> Summary:
        """Summarize a sample (linear-interpolated percentiles)."""
        p10, p50, p90, p99 = percentiles(x)
        # Shifted mean: exact for a constant sample (a quiet simulation equals the forecast).
        mean = float(x[0] + np.mean(x - x[0]))
        return cls(mean=mean, p10=p10, p50=p50, p90=p90, p99=p99)

    def as_dict(self) -> dict[str, float]:
        """JSON-ready mapping."""
        return {
            "mean": self.mean,
            "p10": self.p10,
            "p50": self.p50,
            "p90": self.p90,
            "p99": self.p99,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Histogram:
    """Bin edges (n + 1) and counts (n)."""

    edges: tuple[float, ...]
    counts: tuple[int, ...]

    @classmethod
    def of(cls, x: NDArray[np.float64], bins: int = 40) -> Histogram:
        """Equal-width bins over the sample's range."""
        counts, edges = np.histogram(x, bins=bins)
        return cls(edges=tuple(float(e) for e in edges), counts=tuple(int(c) for c in counts))

    def as_dict(self) -> dict[str, list[float] | list[int]]:
        """JSON-ready mapping."""
        return {"edges": list(self.edges), "counts": list(self.counts)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Simulation:
    """The distribution of a run's bill and wall-clock over ``trials`` sampled runs."""

    name: str
    trials: int
    seed: int
    elapsed_s: float
    params: SimulationParams
    deterministic_total_usd: float
    expected_total_usd: float
    cost_usd: Summary
    wall_hours: Summary
    deterministic_wall_hours: float
    expected_wall_hours: float
    deadline_hours: float | None
    deadline_miss_probability: float | None
    cost_histogram: Histogram
    wall_histogram: Histogram
    by_category_mean_usd: Mapping[str, float]
    deterministic_by_category_usd: Mapping[str, float]
    mean_events: Mapping[str, float]
    cost_se_usd: float
    warnings: tuple[str, ...] = ()
    samples: TrialSamples | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The JSON contract of ``trainbill simulate --json`` (without the studies)."""
        return {
            "name": self.name,
            "trials": self.trials,
            "seed": self.seed,
            "elapsed_s": self.elapsed_s,
            "deterministic_total_usd": self.deterministic_total_usd,
            "expected_total_usd": self.expected_total_usd,
            "cost_usd": {**self.cost_usd.as_dict(), "standard_error": self.cost_se_usd},
            "wall_hours": self.wall_hours.as_dict(),
            "deterministic_wall_hours": self.deterministic_wall_hours,
            "expected_wall_hours": self.expected_wall_hours,
            "deadline_hours": self.deadline_hours,
            "deadline_miss_probability": self.deadline_miss_probability,
            "histogram": {
                "cost_usd": self.cost_histogram.as_dict(),
                "wall_hours": self.wall_histogram.as_dict(),
            },
            "by_category_mean_usd": dict(self.by_category_mean_usd),
            "deterministic_by_category_usd": dict(self.deterministic_by_category_usd),
            "mean_events": dict(self.mean_events),
            "params": self.params.as_dict(),
            "warnings": list(self.warnings),
        }


def _at_spot_price(usage: Usage, scale: float) -> Usage:
    """The usage with the spot price at ``scale`` × the catalog's."""
    return usage.with_values({"purchase.spot_price_scale": scale})


def expected_usage(usage: Usage, p: SimulationParams) -> Usage:
    """The usage at the analytic expectation of every sampled quantity (Wald's identity).

    E[throttled hours] = rate × GPUs × compute hours × mean episode; E[events] = rate × E[exposed];
    E[hours lost per event] = interval / 2 + mean restart (``Usage.with_schedule``). Priced with
    ``forecast_usage`` at the mean spot price this gives the expected bill the simulation's mean
    must converge to.
    """
    ek = p.time_error_median * math.exp(p.time_error_sigma**2 / 2.0)  # E[k] of the lognormal
    compute = usage.compute.hours * ek
    throttled = p.throttle_rate_per_gpu_hour * usage.gpus * (compute * p.throttle_hours_mean)
    scaled = usage.with_values(
        {
            "compute.hours": compute,
            "evaluation.hours": usage.evaluation.hours * ek,
            "compute.sync_stall_hours": usage.compute.sync_stall_hours * ek
            + p.throttle_slowdown * throttled,
        }
    )
    return scaled.with_schedule(
        failure_rate_per_gpu_day=p.failure_rate_per_gpu_day,
        spot_reclaim_rate_per_node_hour=p.spot_reclaim_rate_per_node_hour,
        restart_hours=p.restart_hours,
    )


def _resolve(
    plan_or_usage: Plan | Usage, catalog: Catalog, today: date | None
) -> tuple[Usage, float | None]:
    if isinstance(plan_or_usage, Usage):
        return plan_or_usage, None
    return usage_for(plan_or_usage, catalog, today=today), plan_or_usage.run.deadline_hours


def _seed_sequence(rng: object) -> np.random.SeedSequence:
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, bool) or not isinstance(rng, int) or rng < 0:
        msg = f"seed must be a non-negative integer (got {rng!r})"
        raise SimulationError(msg)
    return np.random.SeedSequence(rng)


def _snap_noise(values: NDArray[np.float64]) -> list[float]:
    """Category means with floating-point residue (e.g. -1e-16 for a category no trial paid) set
    to exactly 0, so no category shows a negative cost that is only rounding."""
    scale = float(np.abs(values).sum())
    return [0.0 if abs(v) <= 1e-12 * max(scale, 1.0) else float(v) for v in values]


def _check_trials(trials: object, chunk_size: object) -> None:
    if isinstance(trials, bool) or not isinstance(trials, int) or trials <= 0:
        msg = f"trials must be a positive integer (got {trials!r})"
        raise SimulationError(msg)
    if trials > MAX_TRIALS:
        msg = f"trials must be at most {MAX_TRIALS:,} (got {trials:,}); per-trial results take 16 bytes each"
        raise SimulationError(msg)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
        msg = f"chunk_size must be a positive integer (got {chunk_size!r})"
        raise SimulationError(msg)


def simulate(
    plan_or_usage: Plan | Usage,
    catalog: Catalog,
    *,
    trials: int,
    rng: int | np.random.SeedSequence | None = None,
    chunk_size: int = 16 * BLOCK,
    params: SimulationParams | None = None,
    deadline_hours: float | None = None,
    today: date | None = None,
    keep_samples: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Simulation:
    """Sample ``trials`` runs of the plan and price each with the forecast's cost drivers.

    Args:
        plan_or_usage: A plan (its ``run.deadline_hours`` is used) or an already-worked-out usage.
        catalog: Prices and assumptions (``[simulation]`` spreads).
        trials: Number of sampled runs, 1..``MAX_TRIALS``.
        rng: Seed (int) or ``SeedSequence``; ``None`` draws fresh entropy (reported as ``seed``).
        chunk_size: Trials processed at once (rounded up to whole ``BLOCK``s); memory, not results.
        params: Rates and spreads; default ``SimulationParams.from_usage``.
        deadline_hours: Overrides the plan's deadline.
        today: Price date when the plan has no ``prices.as_of``.
        keep_samples: Keep per-trial sampled quantities (for checks; memory grows with trials).
        progress: Called with (trials done, trials) after each chunk.

    Raises:
        SimulationError: Bad trial count, chunk size, seed or parameters.
    """
    started = time.perf_counter()
    _check_trials(trials, chunk_size)
    usage, plan_deadline = _resolve(plan_or_usage, catalog, today)
    deadline = deadline_hours if deadline_hours is not None else plan_deadline
    if deadline is not None and not deadline > 0:  # NaN-safe
        msg = f"deadline_hours must be > 0 (got {deadline!r})"
        raise SimulationError(msg)
    p = params if params is not None else SimulationParams.from_usage(usage, catalog)
    ss = _seed_sequence(rng)
    seed = int(ss.entropy) if isinstance(ss.entropy, int) else 0
    n_blocks = -(-trials // BLOCK)
    block_seeds = ss.spawn(n_blocks)
    per_chunk = max(1, -(-chunk_size // BLOCK))
    cost = np.empty(trials)
    wall = np.empty(trials)
    sum_q = np.zeros(len(PERTURBED))
    sum_cat = np.zeros(len(CATEGORIES))
    keep_q = np.empty((trials, len(PERTURBED))) if keep_samples else None
    keep_s = np.empty(trials) if keep_samples else None
    for first in range(0, n_blocks, per_chunk):
        parts = [
            _sample_block(usage, p, block_seeds[b], min(BLOCK, trials - b * BLOCK))
            for b in range(first, min(n_blocks, first + per_chunk))
        ]
        spot = np.concatenate([x for x, _ in parts])
        q = np.concatenate([x for _, x in parts])
        lo, hi = first * BLOCK, first * BLOCK + spot.size
        trial = _trial_usage(usage, p, q, spot)
        total, cats = price_arrays(trial, catalog, by_category=True)
        assert cats is not None
        cost[lo:hi] = total
        wall[lo:hi] = trial.wall_hours
        sum_q += q.sum(axis=0)
        sum_cat += cats.sum(axis=1)
        if keep_q is not None and keep_s is not None:
            keep_q[lo:hi] = q
            keep_s[lo:hi] = spot
        if progress is not None:
            progress(hi, trials)

    mean_q = dict(zip(PERTURBED, (sum_q / trials).tolist(), strict=True))
    det = forecast_usage(usage, catalog)
    exp_usage = expected_usage(usage, p)
    mean_s = (p.spot_price_low + p.spot_price_high) / 2.0
    expected_total = forecast_usage(_at_spot_price(exp_usage, mean_s), catalog).total_usd
    warnings: list[str] = []
    if p.throttle_rate_per_gpu_hour > 0 and usage.time.sync_stall_fraction <= 0:
        warnings.append(
            "the plan has no sync stall (straggler_cv and communication both zero), so the sync_stall driver "
            "prices no throttling hours; they still lengthen the run (storage, monitoring, networking)"
        )
    samples = None
    if keep_q is not None and keep_s is not None:
        samples = TrialSamples(
            params=p,
            spot_scale=keep_s,
            quantities=keep_q,
            cost_usd=cost.copy(),
            wall_hours=wall.copy(),
        )
    miss = None if deadline is None else float(np.mean(wall > deadline))
    return Simulation(
        name=usage.name,
        trials=trials,
        seed=seed,
        elapsed_s=time.perf_counter() - started,
        params=p,
        deterministic_total_usd=det.total_usd,
        expected_total_usd=expected_total,
        cost_usd=Summary.of(cost),
        cost_se_usd=float(np.std(cost, ddof=1) / math.sqrt(trials)) if trials > 1 else float("nan"),
        wall_hours=Summary.of(wall),
        deterministic_wall_hours=usage.wall_hours,
        expected_wall_hours=exp_usage.wall_hours,
        deadline_hours=deadline,
        deadline_miss_probability=miss,
        cost_histogram=Histogram.of(cost),
        wall_histogram=Histogram.of(wall),
        by_category_mean_usd=dict(zip(CATEGORIES, _snap_noise(sum_cat / trials), strict=True)),
        deterministic_by_category_usd=dict(det.ledger.by_category()),
        mean_events={
            "failures": mean_q["reliability.failure_events"],
            "reclaims": mean_q["reliability.reclaim_events"],
            "failure_lost_hours": mean_q["reliability.failure_lost_hours"],
            "reclaim_lost_hours": mean_q["reliability.reclaim_lost_hours"],
            "sync_stall_hours": mean_q["compute.sync_stall_hours"],
            "checkpoint_stall_hours": mean_q["checkpoint.stall_hours"],
        },
        warnings=tuple(warnings),
        samples=samples,
    )


# --- checkpoint interval -----------------------------------------------------------------------


def with_interval(usage: Usage, interval_hours: float) -> Usage:
    """The usage with another checkpoint interval: count, stall and expected losses re-derived
    by ``Usage.with_schedule`` (``usage_for``'s own rule), so the plan's interval gives back the
    same usage."""
    if not interval_hours > 0:
        msg = f"checkpoint interval must be > 0 hours (got {interval_hours!r})"
        raise SimulationError(msg)
    return usage.with_schedule(interval_hours=interval_hours)


def _interruptions_per_hour(usage: Usage, p: SimulationParams) -> float:
    """The whole job's failures plus spot reclaims per hour at the simulation's rates."""
    return failures_per_hour(p.failure_rate_per_gpu_day, usage.gpus) + float(
        reclaims_per_hour(
            p.spot_reclaim_rate_per_node_hour, usage.nodes, usage.purchase.spot_fraction
        )
    )


def young_daly_interval(usage: Usage, p: SimulationParams) -> float | None:
    """Young/Daly first-order optimum sqrt(2 × checkpoint cost × MTBF), in hours.

    Checkpoint cost is one write's stall (the snapshot only, when asynchronous); MTBF is the
    whole job's: 1 / (GPU failures per hour + spot reclaims per hour). None when either is zero.
    """
    per_hour = _interruptions_per_hour(usage, p)
    delta = usage.checkpoint.stall_hours_each
    if per_hour <= 0 or delta <= 0:
        return None
    return young_daly_interval_hours(delta, 1.0 / per_hour)


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointStudy:
    """Checkpoint interval: Young/Daly, the simulated optimum and what the plan's choice costs."""

    plan_interval_hours: float
    young_daly_hours: float | None
    mtbf_hours: float | None
    checkpoint_stall_hours_each: float
    asynchronous: bool
    simulated_optimum_hours: float
    grid: tuple[tuple[float, float, float], ...]  # (interval h, mean cost $, p90 cost $)
    plan_mean_usd: float
    optimum_mean_usd: float
    trials: int

    @property
    def plan_excess_usd(self) -> float:
        """Expected extra spend of the plan's interval over the simulated optimum."""
        return self.plan_mean_usd - self.optimum_mean_usd

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "plan_interval_hours": self.plan_interval_hours,
            "young_daly_hours": self.young_daly_hours,
            "mtbf_hours": self.mtbf_hours,
            "checkpoint_stall_hours_each": self.checkpoint_stall_hours_each,
            "asynchronous": self.asynchronous,
            "simulated_optimum_hours": self.simulated_optimum_hours,
            "plan_mean_usd": self.plan_mean_usd,
            "optimum_mean_usd": self.optimum_mean_usd,
            "plan_excess_usd": self.plan_excess_usd,
            "trials": self.trials,
            "grid": [{"interval_hours": i, "mean_usd": m, "p90_usd": q} for i, m, q in self.grid],
        }


def checkpoint_study(
    plan_or_usage: Plan | Usage,
    catalog: Catalog,
    *,
    trials: int = 4000,
    rng: int | None = 0,
    params: SimulationParams | None = None,
    grid: Sequence[float] | None = None,
    today: date | None = None,
) -> CheckpointStudy | None:
    """Scan checkpoint intervals with common random numbers (same seed, per-component streams).

    The grid spans a quarter to four times the Young/Daly interval (geometric, 13 points) plus
    the plan's own interval. Returns None when the plan writes no checkpoints.
    """
    usage, _ = _resolve(plan_or_usage, catalog, today)
    if usage.checkpoint.size_gb <= 0 or usage.checkpoint.stall_hours_each <= 0:
        return None
    p = params if params is not None else SimulationParams.from_usage(usage, catalog)
    yd = young_daly_interval(usage, p)
    plan_interval = usage.checkpoint.interval_hours
    if grid is None:
        centre = yd if yd is not None else plan_interval
        points = set(np.round(centre * np.geomspace(0.25, 4.0, 13), 6).tolist())
        points.add(plan_interval)
        # Never beyond the run itself: one checkpoint at the end is the longest useful interval.
        horizon = max(usage.compute.hours, plan_interval)
        grid = sorted(x for x in points if x <= horizon) or [plan_interval]
    seed = 0 if rng is None else rng
    rows: list[tuple[float, float, float]] = []
    for interval in sorted(set(grid) | {plan_interval}):
        u = with_interval(usage, float(interval))
        sim = simulate(u, catalog, trials=trials, rng=seed, params=p)
        rows.append((float(interval), sim.cost_usd.mean, sim.cost_usd.p90))
    best = min(rows, key=lambda r: r[1])
    plan_row = next(r for r in rows if r[0] == plan_interval)
    per_hour = _interruptions_per_hour(usage, p)
    return CheckpointStudy(
        plan_interval_hours=plan_interval,
        young_daly_hours=yd,
        mtbf_hours=1.0 / per_hour if per_hour > 0 else None,
        checkpoint_stall_hours_each=usage.checkpoint.stall_hours_each,
        asynchronous=usage.checkpoint.asynchronous,
        simulated_optimum_hours=best[0],
        grid=tuple(rows),
        plan_mean_usd=plan_row[1],
        optimum_mean_usd=best[1],
        trials=trials,
    )


# --- spot or not -------------------------------------------------------------------------------


def on_demand_usage(usage: Usage) -> Usage:
    """The same run with every node on demand: no spot share, no reclaims."""
    return usage.with_schedule(spot_fraction=0.0, spot_reclaim_rate_per_node_hour=0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotComparison:
    """The plan's spot share against all on-demand, same random numbers for both."""

    spot_fraction: float
    spot_mean_usd: float
    spot_p90_usd: float
    on_demand_mean_usd: float
    on_demand_p90_usd: float
    nominal_savings: float  # what the spot discount alone promises (no reclaims)
    expected_savings: float  # after sampled reclaims, restarts and price variation
    p90_savings: float
    trials: int

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "spot_fraction": self.spot_fraction,
            "spot_mean_usd": self.spot_mean_usd,
            "spot_p90_usd": self.spot_p90_usd,
            "on_demand_mean_usd": self.on_demand_mean_usd,
            "on_demand_p90_usd": self.on_demand_p90_usd,
            "nominal_savings": self.nominal_savings,
            "expected_savings": self.expected_savings,
            "p90_savings": self.p90_savings,
            "trials": self.trials,
        }


def spot_comparison(
    plan_or_usage: Plan | Usage,
    catalog: Catalog,
    *,
    trials: int = 4000,
    rng: int | None = 0,
    params: SimulationParams | None = None,
    today: date | None = None,
) -> SpotComparison | None:
    """Expected cost and P90 with the plan's spot share and with none; None for an all-on-demand plan.

    Nominal savings price the spot plan with no reclaims at the mean spot price: the number a
    spreadsheet shows. Expected savings are what the sampled runs keep after reclaims.
    """
    usage, _ = _resolve(plan_or_usage, catalog, today)
    if usage.purchase.spot_fraction <= 0:
        return None
    p = params if params is not None else SimulationParams.from_usage(usage, catalog)
    od = on_demand_usage(usage)
    seed = 0 if rng is None else rng
    spot_sim = simulate(usage, catalog, trials=trials, rng=seed, params=p)
    od_sim = simulate(
        od, catalog, trials=trials, rng=seed, params=replace(p, spot_reclaim_rate_per_node_hour=0.0)
    )
    mean_s = (p.spot_price_low + p.spot_price_high) / 2.0
    no_reclaims = usage.with_values(
        {"reliability.reclaim_events": 0.0, "reliability.reclaim_lost_hours": 0.0}
    )
    quiet = replace(p.quiet(), spot_price_low=mean_s, spot_price_high=mean_s)
    nominal_spot = forecast_usage(
        _at_spot_price(
            expected_usage(no_reclaims, replace(quiet, failure_rate_per_gpu_day=0.0)), mean_s
        ),
        catalog,
    ).total_usd
    nominal_od = forecast_usage(
        expected_usage(on_demand_usage(no_reclaims), quiet), catalog
    ).total_usd
    return SpotComparison(
        spot_fraction=usage.purchase.spot_fraction,
        spot_mean_usd=spot_sim.cost_usd.mean,
        spot_p90_usd=spot_sim.cost_usd.p90,
        on_demand_mean_usd=od_sim.cost_usd.mean,
        on_demand_p90_usd=od_sim.cost_usd.p90,
        nominal_savings=1.0 - nominal_spot / nominal_od,
        expected_savings=1.0 - spot_sim.cost_usd.mean / od_sim.cost_usd.mean,
        p90_savings=1.0 - spot_sim.cost_usd.p90 / od_sim.cost_usd.p90,
        trials=trials,
    )


def spot_range_of_on_demand(
    usage: Usage, catalog: Catalog, low: float, high: float
) -> tuple[float, float]:
    """Turn a spot price range given as fractions of on-demand into multipliers of the catalog spot price.

    The seed article states p4d spot "around 65-75% of on-demand"; the catalog's own spot price
    points differ, so the simulation takes the article's range this way.
    """
    if not 0 < low <= high:
        msg = f"spot price range must satisfy 0 < low <= high (got {low:g}:{high:g} of on-demand)"
        raise SimulationError(msg)
    from trainbill.costs._pricing import instance_rate

    od = instance_rate(catalog, usage, "on_demand").usd
    spot = instance_rate(catalog, usage, "spot").usd
    return low * od / spot, high * od / spot
