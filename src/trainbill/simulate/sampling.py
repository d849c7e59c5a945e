"""What one trial draws: the simulation's parameters, the random streams and the sampled usage.

Everything random lives here, so the seeding rule (one ``SeedSequence`` child per ``BLOCK`` of
trials, one stream per component) and its analytic counterpart (``expected_usage``) sit side by
side: a change to what a trial samples must change both.
"""

from __future__ import annotations

import math
from dataclasses import fields, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import SimulationError
from trainbill.timemodel import error_band_quantiles
from trainbill.usage import Usage, failures_per_hour, reclaims_per_hour

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
_STREAMS = 11  # independent random components per block (see _sample_block)
#: Standard normal 90th percentile: a lognormal's P10/P90 are median × exp(∓ this × sigma).
_Z90 = 1.2815515655446004


# --- parameters ------------------------------------------------------------------------------


@record
class SimulationParams:
    """Every rate and spread a trial draws from. Rates from the usage; spreads from
    ``[simulation]``.

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
    #: a two-piece lognormal multiplier with this median and a log-sd on each side, so that it
    #: reproduces the P10, P50 and P90 of actual / forecast GPU-hours of published runs
    #: predicted leave-one-source-out (``time.error_band``). The errors are skewed (0.70 and
    #: 1.77 around a median of 1.01): one lognormal through the two ends put its median at
    #: sqrt(0.70 x 1.77) = 1.11, an 11% longer median run than the data show. 1, 0, 0 when the
    #: plan states its hours (they are the user's).
    time_error_median: float = 1.0
    time_error_sigma_low: float = 0.0
    time_error_sigma_high: float = 0.0

    @property
    def time_error_mean(self) -> float:
        """E[k] of the two-piece lognormal: m · (e^(σl²/2) Φ(−σl) + e^(σh²/2) Φ(σh))."""
        lo, hi = self.time_error_sigma_low, self.time_error_sigma_high
        return self.time_error_median * (
            math.exp(lo * lo / 2.0) * _phi(-lo) + math.exp(hi * hi / 2.0) * _phi(hi)
        )

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
                "simulation parameter spot_reclaim_rate_per_node_hour: "
                "a per-hour probability must be <= 1 "
                f"(got {self.spot_reclaim_rate_per_node_hour!r})"
            )
            raise SimulationError(msg)
        if self.throttle_slowdown > 1:
            msg = (
                "simulation parameter throttle_slowdown: a fraction must be <= 1 "
                f"(got {self.throttle_slowdown!r})"
            )
            raise SimulationError(msg)
        if not self.time_error_median > 0:
            msg = (
                "simulation parameter time_error_median: a multiplier must be > 0 "
                f"(got {self.time_error_median!r})"
            )
            raise SimulationError(msg)
        if self.spot_price_low > self.spot_price_high:
            msg = (
                f"simulation parameters spot_price_low ({self.spot_price_low:g}) > spot_price_high "
                f"({self.spot_price_high:g}); give low <= high"
            )
            raise SimulationError(msg)

    @classmethod
    def from_usage(cls, usage: Usage, catalog: Catalog, **overrides: float) -> SimulationParams:
        """Rates from the usage (plan + assumptions), spreads from ``[simulation]``, then
        overrides."""
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - allowed)
        if unknown:
            msg = (
                f"unknown simulation parameter(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(sorted(allowed))}"
            )
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
        """The same parameters with every rate and spread at zero: the simulation becomes the
        forecast."""
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
            time_error_sigma_low=0.0,
            time_error_sigma_high=0.0,
        )

    def as_dict(self) -> dict[str, float]:
        """JSON-ready mapping."""
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}


def _phi(x: float) -> float:
    """The standard normal CDF."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _time_error(usage: Usage, catalog: Catalog) -> dict[str, float]:
    """Median and the two log-sds that reproduce the cluster's ``time.error_band`` P10, P50
    and P90 (``timemodel.error_band_quantiles``: its cluster-size bucket's)."""
    if usage.time.hours_given:
        return {"time_error_median": 1.0, "time_error_sigma_low": 0.0, "time_error_sigma_high": 0.0}
    q = error_band_quantiles(catalog, usage.gpus)
    lo, mid, hi = q.p10, q.p50, q.p90
    return {
        "time_error_median": mid,
        "time_error_sigma_low": math.log(mid / lo) / _Z90,
        "time_error_sigma_high": math.log(hi / mid) / _Z90,
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


@record
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
    if p.time_error_sigma_low > 0 or p.time_error_sigma_high > 0 or p.time_error_median != 1.0:
        z = g[10].standard_normal(n)
        sigma = np.where(z < 0.0, p.time_error_sigma_low, p.time_error_sigma_high)
        k = p.time_error_median * np.exp(sigma * z)
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


def _at_spot_price(usage: Usage, scale: float) -> Usage:
    """The usage with the spot price at ``scale`` × the catalog's."""
    return usage.with_values({"purchase.spot_price_scale": scale})


def expected_usage(usage: Usage, p: SimulationParams) -> Usage:
    """The usage at the analytic expectation of every sampled quantity (Wald's identity).

    E[throttled hours] = rate × GPUs × compute hours × mean episode;
    E[events] = rate × E[exposed]; E[hours lost per event] = interval / 2 + mean restart
    (``Usage.with_schedule``). Priced with
    ``forecast_usage`` at the mean spot price this gives the expected bill the simulation's mean
    must converge to.
    """
    ek = p.time_error_mean
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


def _seed_sequence(rng: object) -> np.random.SeedSequence:
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, bool) or not isinstance(rng, int) or rng < 0:
        msg = f"seed must be a non-negative integer (got {rng!r})"
        raise SimulationError(msg)
    return np.random.SeedSequence(rng)
