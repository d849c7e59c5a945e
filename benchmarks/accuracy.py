"""Accuracy of the time model against published runs: ``python benchmarks/accuracy.py``.

Prints predicted vs published for every usable row of tests/data/published_runs/published_runs.csv,
then the median absolute error and the share within ±25%, separately for throughput rows
(model TFLOP/s or tokens/s per GPU) and whole-run rows (GPU-hours including overheads), twice:

* in-sample: the shipped parameters, fitted to all rows (flatters the model);
* leave-one-out cross-validated: each row predicted by a refit on the other rows, which is the
  honest estimate for a run that is not in the table. The refits take about two minutes on two
  cores; ``--stored-cv`` prints the LOO residuals written by ``tools/fit_time_model.py`` instead.
"""

from __future__ import annotations

import statistics
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tools"))

from published_runs import cases, predict, run_date

from trainbill.catalog import load_catalog
from trainbill.timemodel import fit_params

FIT = ROOT / "src" / "trainbill" / "catalog" / "data" / "time_model_fit.toml"


def main(argv: list[str] | None = None) -> int:
    """Print the table and both summaries; exit 0."""
    args = sys.argv[1:] if argv is None else argv
    catalog = load_catalog()
    rows = list(cases())
    pred = {c.id: predict(c, catalog) for c in rows}
    if "--stored-cv" in args:
        stored = tomllib.loads(FIT.read_text(encoding="utf-8"))["report"]["loo_residuals"]
        cv = {c.id: c.published * (1.0 + float(stored[c.id])) for c in rows}
        how = "stored in time_model_fit.toml"
    else:
        import fit_time_model

        cv = fit_time_model.cross_validate(rows, fit_params(catalog))
        how = "recomputed now"
    print(f"{'row':44} {'kind':10} {'published':>12} {'predicted':>12} {'error':>8} {'LOO err':>8} {'run':>7}  basis")
    for c in rows:
        err, loo = pred[c.id] / c.published - 1.0, cv[c.id] / c.published - 1.0
        when = run_date(c.id).strftime("%Y-%m")  # the software-maturity factor's date
        print(f"{c.id:44} {c.kind:10} {c.published:12,.1f} {pred[c.id]:12,.1f} {err:+8.1%} {loo:+8.1%} {when:>7}  {c.note}")
    for label, p in (("in-sample (fitted to all rows)", pred), (f"leave-one-out cross-validated ({how})", cv)):
        print(f"\n{label}:")
        for kind in ("throughput", "whole_run"):
            errs = [abs(p[c.id] / c.published - 1.0) for c in rows if c.kind == kind]
            within = sum(e <= 0.25 for e in errs) / len(errs)
            print(f"  {kind:10}: {len(errs):2d} rows, median |error| {statistics.median(errs):.1%}, within ±25%: {within:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
