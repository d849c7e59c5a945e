"""Accuracy of the time model against published runs: ``python benchmarks/accuracy.py``.

Prints predicted vs published for every usable row of tests/data/published_runs/published_runs.csv,
then the median absolute error and the share within ±25%, separately for throughput rows
(model TFLOP/s or tokens/s per GPU) and whole-run rows (GPU-hours including overheads).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from published_runs import cases, predict

from trainbill.catalog import load_catalog


def main() -> int:
    """Print the table and the summary; exit 0."""
    catalog = load_catalog()
    errors: dict[str, list[float]] = {"throughput": [], "whole_run": []}
    print(f"{'row':44} {'kind':10} {'published':>12} {'predicted':>12} {'error':>8}  basis")
    for c in cases():
        p = predict(c, catalog)
        err = p / c.published - 1.0
        errors[c.kind].append(abs(err))
        print(f"{c.id:44} {c.kind:10} {c.published:12,.1f} {p:12,.1f} {err:+8.1%}  {c.note}")
    print()
    for kind, errs in errors.items():
        within = sum(e <= 0.25 for e in errs) / len(errs)
        print(
            f"{kind:10}: {len(errs):2d} rows, median |error| {statistics.median(errs):.1%}, within ±25%: {within:.0%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
