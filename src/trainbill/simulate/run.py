"""The Monte Carlo itself: sample trials block by block, price each chunk with the real
drivers, summarise.

Separate from the studies so each study is visibly just ``simulate`` called on another usage.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

import numpy as np
from numpy.typing import NDArray

from trainbill.catalog import Catalog
from trainbill.costs import price_arrays
from trainbill.errors import SimulationError
from trainbill.forecasting import forecast_usage
from trainbill.ledger import CATEGORIES
from trainbill.simulate.sampling import (
    BLOCK,
    MAX_TRIALS,
    PERTURBED,
    SimulationParams,
    TrialSamples,
    _at_spot_price,
    _sample_block,
    _seed_sequence,
    _trial_usage,
    expected_usage,
)
from trainbill.simulate.summary import Histogram, Simulation, Summary, _snap_noise
from trainbill.spec import Plan
from trainbill.usage import Usage, usage_for


def _resolve(
    plan_or_usage: Plan | Usage, catalog: Catalog, today: date | None
) -> tuple[Usage, float | None]:
    if isinstance(plan_or_usage, Usage):
        return plan_or_usage, None
    return usage_for(plan_or_usage, catalog, today=today), plan_or_usage.run.deadline_hours


def _check_trials(trials: object, chunk_size: object) -> None:
    if isinstance(trials, bool) or not isinstance(trials, int) or trials <= 0:
        msg = f"trials must be a positive integer (got {trials!r})"
        raise SimulationError(msg)
    if trials > MAX_TRIALS:
        msg = (
            f"trials must be at most {MAX_TRIALS:,} (got {trials:,}); "
            "per-trial results take 16 bytes each"
        )
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
    deadline = _deadline(deadline_hours if deadline_hours is not None else plan_deadline)
    p = params if params is not None else SimulationParams.from_usage(usage, catalog)
    ss = _seed_sequence(rng)
    seed = int(ss.entropy) if isinstance(ss.entropy, int) else 0
    t = _run_trials(usage, p, catalog, ss, trials, chunk_size, keep_samples, progress)
    cost, wall = t.cost, t.wall
    det = forecast_usage(usage, catalog)
    exp_usage = expected_usage(usage, p)
    mean_s = (p.spot_price_low + p.spot_price_high) / 2.0
    expected_total = forecast_usage(_at_spot_price(exp_usage, mean_s), catalog).total_usd
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
        by_category_mean_usd=dict(zip(CATEGORIES, _snap_noise(t.sum_cat / trials), strict=True)),
        deterministic_by_category_usd=dict(det.ledger.by_category()),
        mean_events=t.mean_events(trials),
        # The plan's own warnings (a spot share that splits nodes, prices marked UNVERIFIED,
        # a reference region's rates), as its forecast words them, then the simulation's.
        warnings=(*det.warnings, *_warnings(usage, p)),
        samples=t.samples(p),
    )


def _deadline(deadline: float | None) -> float | None:
    if deadline is not None and not deadline > 0:  # NaN-safe
        msg = f"deadline_hours must be > 0 (got {deadline!r})"
        raise SimulationError(msg)
    return deadline


@dataclass(slots=True)
class _Trials:
    """Per-trial cost and wall-clock, running sums of the sampled quantities and category costs,
    and, when kept, every trial's samples; filled chunk by chunk, so only these 16 bytes per
    trial (more with ``keep_samples``) outlive a chunk."""

    cost: NDArray[np.float64]
    wall: NDArray[np.float64]
    sum_q: NDArray[np.float64]
    sum_cat: NDArray[np.float64]
    keep_q: NDArray[np.float64] | None
    keep_s: NDArray[np.float64] | None

    @classmethod
    def empty(cls, trials: int, keep_samples: bool) -> _Trials:
        return cls(
            cost=np.empty(trials),
            wall=np.empty(trials),
            sum_q=np.zeros(len(PERTURBED)),
            sum_cat=np.zeros(len(CATEGORIES)),
            keep_q=np.empty((trials, len(PERTURBED))) if keep_samples else None,
            keep_s=np.empty(trials) if keep_samples else None,
        )

    def add(
        self,
        lo: int,
        q: NDArray[np.float64],
        spot: NDArray[np.float64],
        trial: Usage,
        catalog: Catalog,
    ) -> int:
        """Price one chunk of trials (first trial ``lo``) and fold it in; the next ``lo``."""
        hi = lo + spot.size
        total, cats = price_arrays(trial, catalog, by_category=True)
        assert cats is not None
        self.cost[lo:hi] = total
        self.wall[lo:hi] = trial.wall_hours
        self.sum_q += q.sum(axis=0)
        self.sum_cat += cats.sum(axis=1)
        if self.keep_q is not None and self.keep_s is not None:
            self.keep_q[lo:hi] = q
            self.keep_s[lo:hi] = spot
        return hi

    def mean_events(self, trials: int) -> dict[str, float]:
        """Mean sampled disruptions per trial, under the names of the JSON contract."""
        mean_q = dict(zip(PERTURBED, (self.sum_q / trials).tolist(), strict=True))
        return {
            "failures": mean_q["reliability.failure_events"],
            "reclaims": mean_q["reliability.reclaim_events"],
            "failure_lost_hours": mean_q["reliability.failure_lost_hours"],
            "reclaim_lost_hours": mean_q["reliability.reclaim_lost_hours"],
            "sync_stall_hours": mean_q["compute.sync_stall_hours"],
            "checkpoint_stall_hours": mean_q["checkpoint.stall_hours"],
        }

    def samples(self, p: SimulationParams) -> TrialSamples | None:
        if self.keep_q is None or self.keep_s is None:
            return None
        return TrialSamples(
            params=p,
            spot_scale=self.keep_s,
            quantities=self.keep_q,
            cost_usd=self.cost.copy(),
            wall_hours=self.wall.copy(),
        )


def _run_trials(
    usage: Usage,
    p: SimulationParams,
    catalog: Catalog,
    ss: np.random.SeedSequence,
    trials: int,
    chunk_size: int,
    keep_samples: bool,
    progress: Callable[[int, int], None] | None,
) -> _Trials:
    """Sample and price the trials a chunk of whole ``BLOCK``s at a time (module doc: block b
    always draws from the b-th child seed, so ``chunk_size`` cannot change the results)."""
    n_blocks = -(-trials // BLOCK)
    block_seeds = ss.spawn(n_blocks)
    per_chunk = max(1, -(-chunk_size // BLOCK))
    out = _Trials.empty(trials, keep_samples)
    for first in range(0, n_blocks, per_chunk):
        parts = [
            _sample_block(usage, p, block_seeds[b], min(BLOCK, trials - b * BLOCK))
            for b in range(first, min(n_blocks, first + per_chunk))
        ]
        spot = np.concatenate([x for x, _ in parts])
        q = np.concatenate([x for _, x in parts])
        hi = out.add(first * BLOCK, q, spot, _trial_usage(usage, p, q, spot), catalog)
        if progress is not None:
            progress(hi, trials)
    return out


def _warnings(usage: Usage, p: SimulationParams) -> tuple[str, ...]:
    if p.throttle_rate_per_gpu_hour > 0 and usage.time.sync_stall_fraction <= 0:
        no_stall = (
            "the plan has no sync stall (straggler_cv and communication both zero), "
            "so the sync_stall driver prices no throttling hours; "
            "they still lengthen the run (storage, monitoring, networking)"
        )
        return (no_stall,)
    return ()
