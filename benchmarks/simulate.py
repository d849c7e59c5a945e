"""Benchmark ``trainbill.simulate``: trials per second and peak memory, as a plain script.

Run from the repository root (not collected by pytest)::

    python benchmarks/simulate.py [--trials 1000000] [--chunk-size 65536]

Cases: the seed article's 32-node p5 run (``examples/seed-70b-finetune.toml``), the same
plan on 1,024 nodes (8,192 GPUs: ~32x more failure and throttling events per trial), and a
pre-training run whose hours come from the time model (``examples/pretrain-512-h100.toml``), so
every trial also samples the time model's error. The goal
is >= 20,000 trials/s for the 32-node case on a 2-core machine. Peak memory is the process's
max RSS growth, to show that chunking bounds everything but the 16 bytes per trial kept for
exact percentiles.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from datetime import date
from pathlib import Path

from trainbill.catalog import load_catalog
from trainbill.simulate import simulate
from trainbill.spec import load_plan
from trainbill.usage import usage_for

ROOT = Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale


def main() -> int:
    """Print trials/s for each case."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1_000_000)
    ap.add_argument("--chunk-size", type=int, default=65_536)
    args = ap.parse_args()
    catalog = load_catalog()
    plan = load_plan(ROOT / "examples" / "seed-70b-finetune.toml")
    big = plan.model_copy(update={"cluster": plan.cluster.model_copy(update={"nodes": 1024})})
    modelled = load_plan(ROOT / "examples" / "pretrain-512-h100.toml")
    cases = (
        ("32-node seed example", plan),
        ("1,024-node run", big),
        ("pretrain-512 (time-model error sampled)", modelled),
    )
    for label, p in cases:
        usage = usage_for(p, catalog, today=date(2026, 12, 2))
        simulate(usage, catalog, trials=1000, rng=0)  # warm-up (imports, model build)
        before = _rss_mb()
        t0 = time.perf_counter()
        sim = simulate(usage, catalog, trials=args.trials, rng=1, chunk_size=args.chunk_size)
        dt = time.perf_counter() - t0
        print(
            f"{label}: {args.trials:,} trials in {dt:.2f} s = {args.trials / dt:,.0f} trials/s; "
            f"mean ${sim.cost_usd.mean:,.0f}, P90 ${sim.cost_usd.p90:,.0f}; "
            f"{sim.mean_events['failures']:.2f} failures/trial; max RSS "
            f"+{_rss_mb() - before:,.0f} MB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
