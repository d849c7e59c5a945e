"""Monte Carlo of a training run: failures, spot reclaims, restarts, checkpoints, stragglers, spot prices.

The deterministic forecast prices *expected* disruptions. Finance asks for the worst case, so
this module samples the disruptions of many runs and prices every trial with the very same
cost drivers (``trainbill.costs``) as the forecast: it perturbs the ``Usage``, never the code
path. Calling every driver for every trial would be far too slow, so we use the fact that the
drivers are linear in the usage quantities and in the spot price:

    cost(Δ, s) = a + B·Δ + (s − 1)·(d + E·Δ)

where Δ is the trial's deviation of (sync stall, checkpoint stall, failures, failure hours,
reclaims, reclaim hours) from the expected usage and s the trial's spot-price multiplier. The
coefficients come from a handful of ``forecast_usage`` evaluations with single fields nudged
(``dataclasses.replace``) and the spot price scaled, and a further evaluation at a mixed point
checks that the drivers really are linear (else ``SimulationError``), so a change to a driver
can never silently make the simulation disagree with the forecast.

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
from trainbill.errors import SimulationError
from trainbill.forecast import forecast_usage
from trainbill.ledger import CATEGORIES
from trainbill.spec import Plan
from trainbill.usage import Usage, usage_for

__all__ = [
    "BLOCK",
    "MAX_TRIALS",
    "PERTURBED",
    "CheckpointStudy",
    "CostModel",
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
    "spot_scaled_catalog",
    "with_interval",
    "young_daly_interval",
]

#: Largest accepted trial count: per-trial results take 16 bytes (160 MB at the cap).
MAX_TRIALS = 10_000_000
#: Trials per random-stream block; chunks are whole blocks so chunking cannot change results.
BLOCK = 4096
#: Usage fields a trial perturbs (the simulation's linear cost model is in these and the spot price).
PERTURBED = (
    "sync_stall_hours",
    "checkpoint_stall_hours",
    "failure_events",
    "failure_lost_hours",
    "reclaim_events",
    "reclaim_lost_hours",
    "compute_hours",
    "eval_hours",
)
_QUANTILES = (10, 50, 90, 99)
_STREAMS = 11  # independent random components per block (see _sample_block)
#: Standard normal 90th percentile: a lognormal's P10/P90 are median × exp(∓ this × sigma).
_Z90 = 1.2815515655446004
_LINEARITY_RTOL = 1e-9


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
            "failure_rate_per_gpu_day": usage.failure_rate_per_gpu_day,
            "spot_reclaim_rate_per_node_hour": usage.spot_reclaim_rate_per_node_hour,
            "restart_hours": usage.restart_hours,
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


# --- the linear cost model -----------------------------------------------------------------


def spot_scaled_catalog(catalog: Catalog, usage: Usage, scale: float) -> Catalog:
    """The catalog with the usage's instance spot price points multiplied by ``scale``.

    How a trial's spot price reaches the unchanged cost drivers: the price is catalog data.
    """
    prices = tuple(
        replace(p, usd=p.usd * scale)
        if p.option == "spot" and p.item == usage.instance.instance and p.provider == usage.provider
        else p
        for p in catalog.prices
    )
    return replace(catalog, prices=prices)


def _evaluate(usage: Usage, catalog: Catalog) -> tuple[float, NDArray[np.float64]]:
    ledger = forecast_usage(usage, catalog).ledger
    by_cat = ledger.by_category()
    return ledger.total_usd, np.array([by_cat.get(c, 0.0) for c in CATEGORIES], dtype=np.float64)


@dataclass(frozen=True, slots=True, kw_only=True)
class CostModel:
    """Exact affine cost of a usage's perturbations: ``cost = a + B·Δ + (s − 1)(d + E·Δ)``.

    Column 0 of each array is the total; columns 1.. are ``CATEGORIES`` in order.
    """

    base: NDArray[np.float64]  # a, shape (1 + C,)
    slope: NDArray[np.float64]  # B, shape (K, 1 + C)
    spot_base: NDArray[np.float64]  # d
    spot_slope: NDArray[np.float64]  # E
    x0: NDArray[np.float64]  # expected values of the perturbed fields, shape (K,)

    @classmethod
    def build(cls, usage: Usage, catalog: Catalog) -> CostModel:
        """Evaluate the drivers at the usage and at nudged usages; verify linearity."""

        def ev(u: Usage, cat: Catalog) -> NDArray[np.float64]:
            total, cats = _evaluate(u, cat)
            return np.concatenate(([total], cats))

        double = spot_scaled_catalog(catalog, usage, 2.0)
        x0 = np.array([float(getattr(usage, f)) for f in PERTURBED])
        steps = np.maximum(1.0, np.abs(x0))
        f00 = ev(usage, catalog)
        f01 = ev(usage, double)
        slope = np.empty((len(PERTURBED), f00.size))
        spot_slope = np.empty_like(slope)
        for k, name in enumerate(PERTURBED):
            one: dict[str, Any] = {name: float(x0[k] + steps[k])}
            nudged = replace(usage, **one)
            f10 = ev(nudged, catalog)
            f11 = ev(nudged, double)
            slope[k] = (f10 - f00) / steps[k]
            spot_slope[k] = (f11 - f10 - f01 + f00) / steps[k]
        model = cls(base=f00, slope=slope, spot_base=f01 - f00, spot_slope=spot_slope, x0=x0)
        # Linearity check at a mixed point: an unequal nudge of every field and a third spot price.
        mix = np.linspace(0.3, 0.9, len(PERTURBED)) * steps
        s = 1.37
        mixed: dict[str, Any] = {name: float(x0[k] + mix[k]) for k, name in enumerate(PERTURBED)}
        probe = replace(usage, **mixed)
        actual = ev(probe, spot_scaled_catalog(catalog, usage, s))
        predicted = model.predict(mix[None, :], np.array([s]))[0]
        scale = max(1.0, float(np.max(np.abs(f00))), float(np.max(np.abs(actual))))
        if np.max(np.abs(actual - predicted)) > _LINEARITY_RTOL * scale:
            worst = int(np.argmax(np.abs(actual - predicted)))
            label = "total" if worst == 0 else CATEGORIES[worst - 1]
            msg = (
                f"cost drivers are not linear in {', '.join(PERTURBED)} and the spot price "
                f"({label}: predicted ${predicted[worst]:,.6f}, drivers gave ${actual[worst]:,.6f}); "
                "the simulation cannot price trials exactly"
            )
            raise SimulationError(msg)
        return model

    def predict(self, delta: NDArray[np.float64], spot: NDArray[np.float64]) -> NDArray[np.float64]:
        """Cost of trials with deviations ``delta`` (n, K) and spot multipliers ``spot`` (n,): (n, 1 + C)."""
        ds = (spot - 1.0)[:, None]
        return self.base + delta @ self.slope + ds * (self.spot_base + delta @ self.spot_slope)

    def total(self, delta: NDArray[np.float64], spot: NDArray[np.float64]) -> NDArray[np.float64]:
        """Total cost only (the fast path)."""
        ds = spot - 1.0
        out: NDArray[np.float64] = self.base[0] + delta @ self.slope[:, 0]
        out += ds * (self.spot_base[0] + delta @ self.spot_slope[:, 0])
        return out


# --- sampling --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialSamples:
    """Per-trial sampled usage quantities and their prices (only kept when asked for)."""

    spot_scale: NDArray[np.float64]
    quantities: NDArray[np.float64]  # (n, K) sampled values of PERTURBED
    cost_usd: NDArray[np.float64]
    wall_hours: NDArray[np.float64]

    def usage(self, base: Usage, i: int) -> Usage:
        """Trial ``i`` as a ``Usage`` (price it with ``forecast_usage`` to check the fast path)."""
        values: dict[str, Any] = {
            name: float(self.quantities[i, k]) for k, name in enumerate(PERTURBED)
        }
        return replace(base, **values)


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
    compute = usage.compute_hours * k
    evaluation = usage.eval_hours * k
    # Stragglers: throttling episodes anywhere in the cluster slow every synchronous step.
    episodes = g[1].poisson(p.throttle_rate_per_gpu_hour * usage.gpus * compute)
    throttled = _gamma_sum(g[2], episodes, p.throttle_hours_mean, p.throttle_hours_cv)
    sync = usage.sync_stall_hours * k + p.throttle_slowdown * throttled
    ck = _gamma_sum(
        g[3],
        usage.checkpoint_count * k,
        usage.checkpoint_stall_hours_each,
        p.checkpoint_stall_cv,
    )
    exposed = compute + evaluation + sync + ck
    interval = usage.checkpoint_interval_hours
    fails = g[4].poisson(p.failure_rate_per_gpu_day * usage.gpus * exposed / 24.0)
    fail_lost = interval * _uniform_sums(g[5], fails) + _gamma_sum(
        g[6], fails, p.restart_hours, p.restart_cv
    )
    spot_nodes = usage.nodes * usage.spot_fraction
    reclaims = g[7].poisson(p.spot_reclaim_rate_per_node_hour * spot_nodes * exposed)
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
        )
    )
    return spot, q


# --- results ---------------------------------------------------------------------------------


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
        p10, p50, p90, p99 = (float(v) for v in np.percentile(x, _QUANTILES))
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


def expected_usage(usage: Usage, p: SimulationParams) -> Usage:
    """The usage at the analytic expectation of every sampled quantity (Wald's identity).

    E[throttled hours] = rate × GPUs × compute hours × mean episode; E[events] = rate × E[exposed];
    E[hours lost per event] = interval / 2 + mean restart. Priced with ``forecast_usage`` at the
    mean spot price this gives the expected bill the simulation's mean must converge to.
    """
    ek = p.time_error_median * math.exp(p.time_error_sigma**2 / 2.0)  # E[k] of the lognormal
    compute, evaluation = usage.compute_hours * ek, usage.eval_hours * ek
    sync = (
        usage.sync_stall_hours * ek
        + p.throttle_slowdown
        * p.throttle_rate_per_gpu_hour
        * usage.gpus
        * (compute * p.throttle_hours_mean)
    )
    ck = usage.checkpoint_count * ek * usage.checkpoint_stall_hours_each
    exposed = compute + evaluation + sync + ck
    each = usage.checkpoint_interval_hours / 2.0 + p.restart_hours
    fails = p.failure_rate_per_gpu_day * usage.gpus * exposed / 24.0
    reclaims = p.spot_reclaim_rate_per_node_hour * usage.nodes * usage.spot_fraction * exposed
    return replace(
        usage,
        compute_hours=compute,
        eval_hours=evaluation,
        sync_stall_hours=sync,
        checkpoint_stall_hours=ck,
        failure_events=fails,
        failure_lost_hours=fails * each,
        reclaim_events=reclaims,
        reclaim_lost_hours=reclaims * each,
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
    _model: CostModel | None = None,
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
        SimulationError: Bad trial count, chunk size, seed or parameters, or non-linear drivers.
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
    model = _model if _model is not None else CostModel.build(usage, catalog)

    n_blocks = -(-trials // BLOCK)
    block_seeds = ss.spawn(n_blocks)
    per_chunk = max(1, -(-chunk_size // BLOCK))
    cost = np.empty(trials)
    wall = np.empty(trials)
    sum_delta = np.zeros(len(PERTURBED))
    sum_sdelta = np.zeros(len(PERTURBED))
    sum_ds = 0.0
    keep_q = np.empty((trials, len(PERTURBED))) if keep_samples else None
    keep_s = np.empty(trials) if keep_samples else None
    for first in range(0, n_blocks, per_chunk):
        parts = []
        for b in range(first, min(n_blocks, first + per_chunk)):
            n = min(BLOCK, trials - b * BLOCK)
            parts.append(_sample_block(usage, p, block_seeds[b], n))
        spot = np.concatenate([s for s, _ in parts])
        q = np.concatenate([x for _, x in parts])
        lo = first * BLOCK
        hi = lo + spot.size
        delta = q - model.x0
        cost[lo:hi] = model.total(delta, spot)
        wall[lo:hi] = q[:, 6] + q[:, 7] + q[:, 0] + q[:, 1] + q[:, 3] + q[:, 5]
        ds = spot - 1.0
        sum_delta += delta.sum(axis=0)
        sum_sdelta += ds @ delta
        sum_ds += float(ds.sum())
        if keep_q is not None and keep_s is not None:
            keep_q[lo:hi] = q
            keep_s[lo:hi] = spot
        if progress is not None:
            progress(hi, trials)

    # Category means are linear in the sums, so they are exact without per-trial category costs.
    mean_cat = (
        model.base
        + (sum_delta / trials) @ model.slope
        + (sum_ds / trials) * model.spot_base
        + (sum_sdelta / trials) @ model.spot_slope
    )
    det = forecast_usage(usage, catalog)
    exp_usage = expected_usage(usage, p)
    mean_s = (p.spot_price_low + p.spot_price_high) / 2.0
    expected_total = forecast_usage(
        exp_usage, spot_scaled_catalog(catalog, usage, mean_s)
    ).total_usd
    warnings: list[str] = []
    if p.throttle_rate_per_gpu_hour > 0 and usage.time.sync_stall_fraction <= 0:
        warnings.append(
            "the plan has no sync stall (straggler_cv and communication both zero), so the sync_stall driver "
            "prices no throttling hours; they still lengthen the run (storage, monitoring, networking)"
        )
    samples = None
    if keep_q is not None and keep_s is not None:
        samples = TrialSamples(
            spot_scale=keep_s, quantities=keep_q, cost_usd=cost.copy(), wall_hours=wall.copy()
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
        by_category_mean_usd=dict(zip(CATEGORIES, _snap_noise(mean_cat[1:]), strict=True)),
        deterministic_by_category_usd=dict(det.ledger.by_category()),
        mean_events={
            "failures": float(sum_delta[2] / trials + model.x0[2]),
            "reclaims": float(sum_delta[4] / trials + model.x0[4]),
            "failure_lost_hours": float(sum_delta[3] / trials + model.x0[3]),
            "reclaim_lost_hours": float(sum_delta[5] / trials + model.x0[5]),
            "sync_stall_hours": float(sum_delta[0] / trials + model.x0[0]),
            "checkpoint_stall_hours": float(sum_delta[1] / trials + model.x0[1]),
        },
        warnings=tuple(warnings),
        samples=samples,
    )


# --- checkpoint interval -----------------------------------------------------------------------


def with_interval(usage: Usage, interval_hours: float) -> Usage:
    """The usage with another checkpoint interval: count, stall and expected losses re-derived.

    Mirrors ``usage_for``'s arithmetic (count = compute / interval; each failure or reclaim
    loses half an interval plus the restart), so interval ``usage.checkpoint_interval_hours``
    gives back the same usage.
    """
    if not interval_hours > 0:
        msg = f"checkpoint interval must be > 0 hours (got {interval_hours!r})"
        raise SimulationError(msg)
    count = usage.compute_hours / interval_hours if usage.checkpoint_size_gb > 0 else 0.0
    ck = count * usage.checkpoint_stall_hours_each
    exposed = usage.steady_hours + usage.sync_stall_hours + ck
    each = interval_hours / 2.0 + usage.restart_hours
    fails = usage.failure_rate_per_gpu_day * usage.gpus * exposed / 24.0
    reclaims = usage.spot_reclaim_rate_per_node_hour * usage.nodes * usage.spot_fraction * exposed
    return replace(
        usage,
        checkpoint_interval_hours=interval_hours,
        checkpoint_count=count,
        checkpoint_stall_hours=ck,
        failure_events=fails,
        failure_lost_hours=fails * each,
        reclaim_events=reclaims,
        reclaim_lost_hours=reclaims * each,
    )


def young_daly_interval(usage: Usage, p: SimulationParams) -> float | None:
    """Young/Daly first-order optimum sqrt(2 × checkpoint cost × MTBF), in hours.

    Checkpoint cost is one write's stall (the snapshot only, when asynchronous); MTBF is the
    whole job's: 1 / (GPU failures per hour + spot reclaims per hour). None when either is zero.
    """
    per_hour = (
        p.failure_rate_per_gpu_day * usage.gpus / 24.0
        + p.spot_reclaim_rate_per_node_hour * (usage.nodes * usage.spot_fraction)
    )
    delta = usage.checkpoint_stall_hours_each
    if per_hour <= 0 or delta <= 0:
        return None
    return math.sqrt(2.0 * delta / per_hour)


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
    if usage.checkpoint_size_gb <= 0 or usage.checkpoint_stall_hours_each <= 0:
        return None
    p = params if params is not None else SimulationParams.from_usage(usage, catalog)
    yd = young_daly_interval(usage, p)
    plan_interval = usage.checkpoint_interval_hours
    if grid is None:
        centre = yd if yd is not None else plan_interval
        points = set(np.round(centre * np.geomspace(0.25, 4.0, 13), 6).tolist())
        points.add(plan_interval)
        # Never beyond the run itself: one checkpoint at the end is the longest useful interval.
        horizon = max(usage.compute_hours, plan_interval)
        grid = sorted(x for x in points if x <= horizon) or [plan_interval]
    seed = 0 if rng is None else rng
    rows: list[tuple[float, float, float]] = []
    for interval in sorted(set(grid) | {plan_interval}):
        u = with_interval(usage, float(interval))
        sim = simulate(u, catalog, trials=trials, rng=seed, params=p)
        rows.append((float(interval), sim.cost_usd.mean, sim.cost_usd.p90))
    best = min(rows, key=lambda r: r[1])
    plan_row = next(r for r in rows if r[0] == plan_interval)
    per_hour = (
        p.failure_rate_per_gpu_day * usage.gpus / 24.0
        + p.spot_reclaim_rate_per_node_hour * (usage.nodes * usage.spot_fraction)
    )
    return CheckpointStudy(
        plan_interval_hours=plan_interval,
        young_daly_hours=yd,
        mtbf_hours=1.0 / per_hour if per_hour > 0 else None,
        checkpoint_stall_hours_each=usage.checkpoint_stall_hours_each,
        asynchronous=usage.asynchronous_checkpoint,
        simulated_optimum_hours=best[0],
        grid=tuple(rows),
        plan_mean_usd=plan_row[1],
        optimum_mean_usd=best[1],
        trials=trials,
    )


# --- spot or not -------------------------------------------------------------------------------


def on_demand_usage(usage: Usage) -> Usage:
    """The same run with every node on demand: no spot share, no reclaims."""
    return replace(
        usage,
        spot_fraction=0.0,
        spot_reclaim_rate_per_node_hour=0.0,
        reclaim_events=0.0,
        reclaim_lost_hours=0.0,
    )


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
    if usage.spot_fraction <= 0:
        return None
    p = params if params is not None else SimulationParams.from_usage(usage, catalog)
    od = on_demand_usage(usage)
    seed = 0 if rng is None else rng
    spot_sim = simulate(usage, catalog, trials=trials, rng=seed, params=p)
    od_sim = simulate(
        od, catalog, trials=trials, rng=seed, params=replace(p, spot_reclaim_rate_per_node_hour=0.0)
    )
    mean_s = (p.spot_price_low + p.spot_price_high) / 2.0
    no_reclaims = replace(usage, reclaim_events=0.0, reclaim_lost_hours=0.0)
    quiet = replace(p.quiet(), spot_price_low=mean_s, spot_price_high=mean_s)
    nominal_spot = forecast_usage(
        expected_usage(no_reclaims, replace(quiet, failure_rate_per_gpu_day=0.0)),
        spot_scaled_catalog(catalog, usage, mean_s),
    ).total_usd
    nominal_od = forecast_usage(
        expected_usage(on_demand_usage(no_reclaims), quiet), catalog
    ).total_usd
    return SpotComparison(
        spot_fraction=usage.spot_fraction,
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
