"""What a simulation reports: percentiles, histograms and the ``Simulation`` result.

Kept apart from the sampling so the report and the web app (``trainbill.analysis``) can summarise
a sample the same way without knowing how it was drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trainbill._record import record
from trainbill.simulate.sampling import SimulationParams, TrialSamples

_QUANTILES = (10, 50, 90, 99)


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


@record
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


@record
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


@record
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


def _snap_noise(values: NDArray[np.float64]) -> list[float]:
    """Category means with floating-point residue (e.g. -1e-16 for a category no trial paid) set
    to exactly 0, so no category shows a negative cost that is only rounding."""
    scale = float(np.abs(values).sum())
    return [0.0 if abs(v) <= 1e-12 * max(scale, 1.0) else float(v) for v in values]
