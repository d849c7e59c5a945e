"""Planner throughput: configurations/s of ``optimize`` vs a loop calling ``forecast`` per plan.

Run: ``python benchmarks/optimize.py``. Prints the end-to-end rate (calibration probes
included), the marginal rate (extra configurations / extra seconds between a small and a large
grid, i.e. the NumPy evaluation itself) and the naive loop's rate measured on a random sample of
the same grid and extrapolated.
"""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import numpy as np

from trainbill.catalog import load_catalog
from trainbill.forecast import forecast
from trainbill.optimize import SearchSpace, candidate_plan, optimize
from trainbill.spec import load_plan

TODAY = date(2026, 12, 2)
PLAN = Path(__file__).resolve().parents[1] / "examples" / "seed-70b-finetune.toml"
SMALL = SearchSpace(spot_fractions=(0.0, 0.5, 1.0), checkpoint_intervals_hours=(1.0, 2.0))
LARGE = SearchSpace(
    spot_fractions=tuple(np.linspace(0.0, 1.0, 11)),
    checkpoint_intervals_hours=(0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0),
    savings_plans=("1yr", "3yr"),
    coverages=tuple(np.linspace(0.1, 1.0, 10)),
)
HUGE = SearchSpace(
    spot_fractions=tuple(np.linspace(0.0, 1.0, 21)),
    checkpoint_intervals_hours=tuple(np.linspace(0.25, 8.0, 32)),
    savings_plans=("1yr", "3yr"),
    coverages=tuple(np.linspace(0.05, 1.0, 20)),
)


def main() -> None:
    """Time the planner on three grid sizes and the naive loop on a sample."""
    catalog = load_catalog()
    plan = load_plan(PLAN)
    optimize(plan, catalog, space=SMALL, today=TODAY)  # warm caches
    rows = []
    for name, space in (("small", SMALL), ("large", LARGE), ("huge", HUGE)):
        t0 = time.perf_counter()
        r = optimize(plan, catalog, space=space, today=TODAY)
        dt = time.perf_counter() - t0
        rows.append((name, r.evaluated, dt))
        print(f"{name:6s} {r.evaluated:>11,} configs in {dt:6.2f} s = {r.evaluated / dt:>12,.0f} configs/s end-to-end")
    (_, n0, t0_), (_, n2, t2) = rows[0], rows[-1]
    marginal = (n2 - n0) / (t2 - t0_)
    print(f"marginal (NumPy evaluation, probes excluded): {marginal:,.0f} configs/s")

    # Naive loop: one forecast() per candidate plan, on a random sample of the large grid.
    rng = np.random.default_rng(0)
    insts = ["p5.48xlarge", "p5en.48xlarge", "p4d.24xlarge", "a3-highgpu-8g", "Standard_ND96asr_v4"]
    sample = 200
    t0 = time.perf_counter()
    for _ in range(sample):
        p = candidate_plan(
            plan, catalog, instance=str(rng.choice(insts)), nodes=int(rng.choice([8, 16, 32, 64, 128])),
            orchestrator="ec2", spot_fraction=float(rng.choice(LARGE.spot_fractions)), savings_plan="1yr",
            savings_plan_coverage=float(rng.choice(LARGE.coverages)),
            checkpoint_interval_hours=float(rng.choice(LARGE.checkpoint_intervals_hours)),
        )
        forecast(p, catalog, today=TODAY)
    per = (time.perf_counter() - t0) / sample
    name, n, dt = rows[-1]
    print(f"naive loop: {1 / per:,.0f} configs/s ({per * 1e3:.2f} ms per forecast, {sample} sampled)")
    print(f"{name} grid by the loop (extrapolated): {n * per:,.0f} s vs {dt:.2f} s -> {n * per / dt:,.0f}x faster")


if __name__ == "__main__":
    main()
