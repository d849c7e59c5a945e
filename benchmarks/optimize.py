"""Planner throughput: configurations/s of ``optimize`` vs a loop calling ``forecast`` per plan.

Run: ``python benchmarks/optimize.py [--repeat 5]``. First the issue #40 grid: ``trainbill optimize
examples/seed-70b-finetune.toml --deadline-hours 96 --clouds aws,gcp,azure --nodes 1,...,512
--savings-plans none,1yr,3yr`` (through the library: the CLI takes at most
``spec.MAX_AXIS_VALUES`` node counts) and the default search (``trainbill optimize
examples/seed-70b-finetune.toml``), and a node-only grid (one instance, orchestrator and term
over node counts 1..512: the shape whose time is all per node count), wall and CPU seconds and
configurations/s, each run with the time model's cache emptied, and the node-only grid at one
node count (a search's fixed cost), then the grid shapes of issue #40's "a grid of any
shape": node counts crossed with one or every instance and few other axes, where the time per
node count is shared by few configurations (``--issue-only``: nothing else;
figures before and after the node-count arrays in ``benchmarks/results/optimize.md``). Then,
per grid, the median end-to-end time over the repeats (every time-model, usage and driver call
included), the marginal rate between the large and the huge grid (same instances, node counts,
orchestrators and Savings Plan terms, hence the same usage work: the difference is the drivers'
array evaluation) and the
naive loop's rate, measured on a random sample of the grid and extrapolated. The load average is
printed because the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from trainbill.catalog import PROVIDERS, Catalog, load_catalog
from trainbill.forecasting import forecast_usage
from trainbill.optimize import SearchSpace, candidate_plan, optimize
from trainbill.spec import Plan, load_plan
from trainbill.usage import usage_for
from trainbill.usage.compute import forget_answers

TODAY = date(2026, 12, 2)
PLAN = Path(__file__).resolve().parents[1] / "examples" / "seed-70b-finetune.toml"
#: Every cloud, as before the planner defaulted to the plan's own cloud and accelerator vendor:
#: the benchmark measures throughput on a large grid (stand-ins stay out either way).
CLOUDS = PROVIDERS
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


#: Issue #40's grid: every cloud, node counts 1 to 512, three commitment terms, a 96 h deadline.
ISSUE = SearchSpace(nodes=tuple(range(1, 513)), savings_plans=("none", "1yr", "3yr"))
#: A grid that varies only the node count: one instance, one orchestrator, no commitment, the
#: default interval × spot axes (30 configurations per node count). Before the time model and
#: usage ran over arrays of node counts each node count cost a scalar ``usage_for``.
NODE_ONLY = SearchSpace(
    instances=("p5.48xlarge",),
    nodes=tuple(range(1, 513)),
    orchestrators=("ec2",),
    savings_plans=("none",),
)
#: The node-only grid at the plan's own node count alone: what a search costs whatever its size
#: (checking the plan, the plan's own forecast, one sweep, the results).
ONE_NODE = SearchSpace(
    instances=("p5.48xlarge",), nodes=(32,), orchestrators=("ec2",), savings_plans=("none",)
)


#: Issue #40's "a grid of any shape": (name, space, clouds). Node counts crossed with one
#: instance, or every instance of one or three clouds, and one orchestrator or three: the
#: shapes whose configurations per node count are few (30 for one orchestrator and no
#: commitment), so what each node count costs decides the rate.
SHAPES: tuple[tuple[str, SearchSpace, tuple[str, ...]], ...] = (
    ("p5.48xlarge x nodes 1..1024 x ec2 x none", SearchSpace(
        instances=("p5.48xlarge",), nodes=tuple(range(1, 1025)), orchestrators=("ec2",),
        savings_plans=("none",)), ("aws",)),
    ("p5.48xlarge x nodes 1..512 x 3 orchestrators x none,1yr,3yr", SearchSpace(
        instances=("p5.48xlarge",), nodes=tuple(range(1, 513)),
        savings_plans=("none", "1yr", "3yr")), ("aws",)),
    ("every AWS instance x nodes 1..512 x ec2 x none", SearchSpace(
        nodes=tuple(range(1, 513)), orchestrators=("ec2",), savings_plans=("none",)), ("aws",)),
    # (a million configurations with few per node count: the large grid whose rate the time
    # per (instance, node count) decides)
    ("every instance of 3 clouds x nodes 1..1024 x none", SearchSpace(
        nodes=tuple(range(1, 1025)), savings_plans=("none",)), ("aws", "gcp", "azure")),
)  # fmt: skip


def _timed(plan: Plan, catalog: Catalog, space: SearchSpace | None, **kw: Any) -> None:
    """One search's wall and CPU seconds and configurations/s (median of 3 by CPU time, each
    with the time model's cache emptied)."""
    runs = []
    for _ in range(3):
        # Cold: the time model's answers are cached across calls (``usage.compute``), which
        # would let the repeats of a small grid skip its time model.
        forget_answers()
        w0, c0 = time.perf_counter(), time.process_time()
        r = optimize(plan, catalog, space=space, today=TODAY, **kw)
        runs.append((time.process_time() - c0, time.perf_counter() - w0, r.evaluated))
    cpu, wall, n = sorted(runs)[1]
    print(
        f"  {n:>11,} configs: wall {wall:7.3f} s, CPU {cpu:7.3f} s = {n / wall:>12,.0f} configs/s "
        f"by wall, {n / cpu:>12,.0f} by CPU (median of 3 by CPU)"
    )


def issue_grids(plan: Plan, catalog: Catalog) -> None:
    """The issue's grid and the default search, as ``trainbill optimize`` runs them."""
    print("issue #40 grid (3 clouds x nodes 1..512 x none,1yr,3yr, deadline 96 h):")
    _timed(plan, catalog, ISSUE, deadline_hours=96, clouds=("aws", "gcp", "azure"))
    print("node-only grid (p5.48xlarge x nodes 1..512 x ec2 x none):")
    _timed(plan, catalog, NODE_ONLY)
    print("one node count (the node-only grid at the plan's 32 nodes: a search's fixed cost):")
    _timed(plan, catalog, ONE_NODE)
    print("default search (trainbill optimize examples/seed-70b-finetune.toml):")
    _timed(plan, catalog, None)
    for name, space, clouds in SHAPES:
        print(f"shape: {name}:")
        _timed(plan, catalog, space, clouds=clouds)


def main() -> None:
    """Time the issue's grids, the planner on three grid sizes (median of repeats) and the naive
    loop on a sample."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--repeat", type=int, default=5, help="timed runs per grid (median reported)"
    )
    parser.add_argument(
        "--sample", type=int, default=200, help="forecast() calls for the naive loop"
    )
    parser.add_argument(
        "--issue-only", action="store_true", help="only the issue #40 grid and the default search"
    )
    args = parser.parse_args()
    catalog = load_catalog()
    plan = load_plan(PLAN)
    print(
        f"cores: {os.cpu_count()}, load average before: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    optimize(plan, catalog, space=SMALL, clouds=CLOUDS, today=TODAY)  # import and first-call costs
    issue_grids(plan, catalog)
    if args.issue_only:
        return
    rows = []
    for name, space in (("small", SMALL), ("large", LARGE), ("huge", HUGE)):
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            r = optimize(plan, catalog, space=space, clouds=CLOUDS, today=TODAY)
            times.append(time.perf_counter() - t0)
        dt = statistics.median(times)
        rows.append((name, r.evaluated, dt))
        print(
            f"{name:6s} {r.evaluated:>11,} configs in {dt:6.2f} s (median of {args.repeat}, min "
            f"{min(times):.2f}, max {max(times):.2f}) = {r.evaluated / dt:>12,.0f} configs/s "
            "end-to-end"
        )
    (_, n1, t1), (name, n2, t2) = rows[1], rows[2]
    if t2 > t1:
        print(
            "marginal large -> huge (array evaluation only, same usage_for calls): "
            f"{(n2 - n1) / (t2 - t1):,.0f} configs/s"
        )
    else:
        print("marginal large -> huge: not measurable (huge ran no slower than large; noise)")

    # Naive loop: one forecast() per candidate plan, on a random sample of the large grid.
    rng = np.random.default_rng(0)
    insts = ["p5.48xlarge", "p5en.48xlarge", "p4d.24xlarge", "a3-highgpu-8g", "Standard_ND96asr_v4"]
    t0 = time.perf_counter()
    for _ in range(args.sample):
        p = candidate_plan(
            plan,
            catalog,
            instance=str(rng.choice(insts)),
            nodes=int(rng.choice([8, 16, 32, 64, 128])),
            # No Savings Plan: the catalog holds only published commitment rates, which most of
            # these instances lack (a forecast with one is an error, as it should be).
            orchestrator="ec2",
            spot_fraction=float(rng.choice(LARGE.spot_fractions)),
            savings_plan="none",
            savings_plan_coverage=0.0,
            checkpoint_interval_hours=float(rng.choice(LARGE.checkpoint_intervals_hours)),
        )
        # One priced plan, as the planner prices a grid point (no error band, budget or actions).
        forecast_usage(usage_for(p, catalog, today=TODAY), catalog, today=TODAY)
    per = (time.perf_counter() - t0) / args.sample
    print(
        f"naive loop: {1 / per:,.0f} configs/s ({per * 1e3:.2f} ms per forecast, {args.sample} "
        "sampled)"
    )
    for name, n, dt in rows[1:]:
        print(
            f"{name} grid by the loop (extrapolated): {n * per:,.0f} s vs {dt:.2f} s -> "
            f"{n * per / dt:,.0f}x faster"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
