"""Fit the time model's seven global parameters to published runs; rewrite time_model_fit.toml.

Usage: ``python tools/fit_time_model.py [FIT_DATE]`` then ``python tools/update_manifest.py``.

Minimises the sum of squared log errors over the usable rows of
tests/data/published_runs/published_runs.csv that ``fitted`` keeps (throughput and whole-run
rows, equal weight; every row is scored, below) with a
deterministic Nelder-Mead from a fixed start, so two runs give identical parameters. Seven
parameters for the rows: e_max (mature matmul efficiency ceiling), k_mem (memory-bound work per
unit of machine balance and width), eta_fp8 (FP8 matmul efficiency), overlap (communication
hidden behind compute), step_overhead_s (host/optimizer seconds per step) and immaturity (the
kernel efficiency a chip's software lacks at launch, decaying over ``time.maturity_tau_years``;
each row's age is its run date minus the chip's launch date) and moe_efficiency (an MoE model's
kernel efficiency relative to a dense one; only MoE rows inform it, so a refit without any MoE
row holds it at 1, the dense value, rather than at whatever the full fit found: otherwise
leave-one-out would leak the held-out MoE row's own answer). Two constants are held at their
catalog values rather than fitted: that time constant (the data cannot pin it) and the bytes per
attention score of pre-FlashAttention software (``time.unfused_attention_bytes_per_score``,
counted by hand; fitted freely it traded against the maturity factor and fell to 20).
Nothing is tuned per row. A row is fitted whatever its ``gpu_hours_cover``: leaving the
distilled and planned whole runs out was tried (fit 2026-12-03) and made the unseen-source
figures worse (throughput LOSO 17.6% -> 20.2%, as-typed whole-run 16.9% -> 17.1%, band coverage
79% -> 74%), so the cover is reported (``training_runs``), not used to select rows.

Tried, not kept (issue #18, fit 2026-12-04; the keep rule: as-typed whole-run LOSO median
must improve, throughput LOSO worsen by at most 0.5 points, band coverage not drop). Figures
are LOSO median |error| / share within ±25%; kept fit: throughput 17.3%/77%, as-typed
whole-run 16.9%/63%, full-input whole-run 24.5%/52%, as-typed training_run 19.0%/62%, band
coverage 76%, step_overhead_s 0.347 s.
(a) A physically scaled step in place of the constant: a fixed host part (step_overhead_s,
bounded to [0, 0.05] s) + the memory-bound fused-AdamW update, 28 bytes per parameter of the
GPU's optimizer shard (read grad 2 + master 4 + m 4 + v 4, write master, m, v and bf16
weights: the 16-byte ZeRO state, Rajbhandari et al. 2020) / HBM bandwidth, sharded over
tp · pp · dp as trainbill.memory does. The update is micro- to milliseconds on these runs,
so the fixed part hit its 0.05 s bound and k_mem rose to 6.74 (overlap 0, eta_fp8 1) to
stand in for it: throughput 19.7%/65%, as-typed whole-run 25.7%/50%, full-input 23.5%/54%,
as-typed training_run 21.7%/59%, full-input training_run 16.6%/69% (was 23.0%/59%),
coverage 76%. (b) The same, fitted without the model_total and with_distillation rows (all
rows still predicted and reported): throughput 14.4%/73%, as-typed whole-run 27.6%/43%,
full-input 22.5%/52%, as-typed training_run 21.7%/56%, coverage 76% (P90 1.92).
(c) The constant kept, those rows left out: step_overhead_s falls to 0.171 s (so they do
carry about half of it): throughput 11.4%/73%, as-typed whole-run 22.9%/54%, full-input
23.0%/52%, as-typed training_run 19.9%/59%, coverage 76%. None improves the as-typed
whole-run figure the forecasts rest on, so the constant stays, fitted on every row.
(d) The overhead per doubling of nodes, step_overhead_s x log2(nodes) (zero on one node:
per-step synchronisation across nodes, and the slowest of n hosts' jitter, grow with log n),
fitted with the H200 rows still validation-only: step_overhead_s 0.050 s per doubling, k_mem
2.30; throughput LOSO 20.5%/69% -> 12.9%/90% on the 29 rows (the never-fitted H200 rows 47.3%
-> 8.5%), full-input whole-run 24.5% -> 24.2%, but as-typed whole-run 16.9%/63% -> 17.6%/54%
and its training_run subset 19.0% -> 20.2% (Llama 1/2 7B-13B on 2,048 GPUs got a larger
overhead: +64%..+84%); not kept by the same rule, though it is the only variant that fits one
node and the clusters alike. (e) (d) plus a whole-run term: a whole run's modelled training
hours x (1 + whole_run_overhead), the term fitted with the others in [0, 3] (restarts beyond
the failure model, rollbacks, data stalls: what no throughput row sees): whole_run_overhead
0.388, step_overhead_s 0.030 s per doubling, e_max 0.873, k_mem 1.98, overlap 1.0 (bound),
immaturity 0.61, moe_efficiency 0.69; throughput LOSO 10.8%/97%, full-input whole-run
24.2%/52%, as-typed whole-run 20.7%/57%, as-typed training_run 21.9%/56%, coverage 83%.
(e') the same term with the constant overhead: whole_run_overhead 0.413, step_overhead_s
0.214 s; throughput 11.8%/97%, full-input 23.4%/57%, as typed 19.5%/59%, training_run
19.5%/59%, coverage 83%. Neither kept. A source bootstrap (4,000 draws) of the as-typed
median, (e) minus the kept fit: +3.1 points, 90% interval -1.3..+6.1; centring the typed
forecasts with a leave-one-out constant makes every fit worse (kept 16.9% -> 23.2%): the
misses are two-sided, and no global parameter tried moves them.

Whole runs whose source does not state the GPU count (18 of 46: Meta's below 405B, DeepSeek
V2 and 67B, Granite 3.0; ``published_runs.gpu_counts_published``) are scored, never fitted: their
count is an assumption (2,048 for each), and fitted they pulled the parameters towards whatever
makes an invented cluster match the published hours. Decided before the fit and judged by the
rule above (fit 2026-12-04, (f)): as-typed whole-run LOSO 16.92% -> 16.86% (63% -> 61% within
±25%), on the 28 runs with a stated count 23.4% -> 19.9%, on the 18 without 16.6% -> 15.1%;
throughput LOSO 20.5%/69% -> 13.7%/69% (with the H200 rows); full-input whole-run 24.5% ->
23.4%; as-typed training_run 19.0% -> 16.4%; band coverage 83% unchanged. Kept. On that fit
set, (d) and (e) were tried again under the same rule (baseline: as typed 16.9%/61%,
throughput 13.7%/69%, coverage 83%) and again not kept: (d) step_overhead_s 0.051 s per
doubling, overlap 0.90: throughput 12.0%/79%, as typed 18.2%/54% (stated-count runs 21.5%),
coverage 80%; (e) whole_run_overhead 0.354, 0.030 s per doubling, e_max 0.79, immaturity 0.54:
throughput 8.1%/90%, as typed 19.3%/61% (stated-count runs 20.0%), coverage 83%.
(g) Each part's measured matmul ceiling (MAMF, stas00/ml-engineering's comparison table, v2:
A100 SXM 271.2 of 312 TFLOP/s = 86.9%, H100 SXM 794.5 of 989 = 80.3%, the H800 taken as the
H100) scaling the kernel efficiency relative to the H100's share, unmeasured parts unchanged
(the A100 rows ran 7-8% faster): e_max 0.567, k_mem 0.343, overlap 0.80, immaturity 0.12;
throughput LOSO 13.7% -> 16.8% (76% within ±25%), as typed 16.9%/61% -> 17.5%/63%, full-input
whole-run 23.4% -> 26.0%. Not kept: the A100 rows' shortfall is not the matmul ceiling's.
(h) Fused causal attention timed at half its counted FLOPs (``time.causal_attention_work_share``
0.5; MFU keeps the full count), from a measurement, not the fit: on one H200 a flash kernel's
causal forward + backward took 0.52-0.53 of the full one at seq 8192-16384
(benchmarks/attention_causal.py), and the same 1.04B model at 32,768 tokens per step ran
seq 2048/8192/16384 steps in 415.5/512.8/630.5 ms (gpu_sweep.py), where the kernel model
(step_overhead_s 0) is within -0.2%/+1.3%/+0.9% timing half and -6.6%/-17.1%/-25.9% timing the
full count. Refit (fit 2026-12-04): e_max 0.614 -> 0.596, k_mem 0.41 -> 0.82, immaturity
0.18 -> 0.14; as typed 16.9%/61% -> 16.9%/63%, full-input whole-run 23.4% -> 21.6%, as-typed
training_run 16.4% -> 15.2%, coverage 83% unchanged, throughput LOSO 13.7%/69% -> 14.5%/62%:
0.3 points past the rule's tolerance, from the llm-foundry rows moving about one point with
e_max and Llama 3's 131K-context row (+1.1% -> +35%: its MFU convention for causal attention
is not stated, and the context-parallel KV exchange is not modelled), while the tokens/s rows
at seq 8192, which no FLOP convention touches, moved closer (Megatron-Bridge Llama 3 8B
-14.0% -> -7.7%, 70B -9.5% -> -5.6%). Kept: the measured physics, over a 0.3-point miss.
The default batch floor then became 2^22 = 4,194,304 tokens, whole sequences (was 4,000,000,
976.56 sequences of 4,096): a default, not a fitted value, so not judged by the rule; no fitted
parameter moved, as typed 16.9% -> 17.1% (63% within), coverage 83% unchanged.
(i) k_mem held at 2.08, measured rather than fitted: the one-H200 steps at d 1024/2048/4096/
8192 (seq 2048; kernel rates 468.0/563.7/618.9/630.9 TFLOP/s in the conventional count) lie on
1 / rate = (1 + k_mem · B / d) / R with R 664 TFLOP/s, k_mem · B = 429 and the H200's B = 206
FLOP/byte. Refit (fit 2026-12-04): e_max 0.65, overlap 0.00, step_overhead_s 0.246; throughput
LOSO 18.6%/56% -> 17.4%/75% (32 rows), but full-input whole-run 21.6% -> 24.9%, as typed
17.1%/63% -> 17.8%/63%, coverage 83% -> 78%. Not kept: eager PyTorch's unfused norms, GELU and
optimizer move more bytes per FLOP than the fused stacks of the published runs.

(j) Issue #43: a run dated before FlashAttention's release (``time.fused_attention_since``,
arXiv 2205.14135 v1, 2022-05-27) is timed with unfused attention wherever the plan does not
say otherwise (``usage.fused_attention_on``), so a ``--run-date`` back-test of a 2021-22 run is
asked about its own software. No fitted row moves (their papers' flags win) and neither does
the as-typed forecast (dated today); the back-test (fit 2026-12-05, no refit) went from
17.5%/65% to 14.5%/72% (OPT-175B -26% -> -7%, PaLM -24% -> -5%, BLOOM -36% -> -19%, GPT-NeoX
-39% -> +2%). Kept: a dated fact, not a fitted value.

(k) Issue #43, second round (fit 2026-12-05, afternoon): three whole runs added from Microsoft's
model cards (Phi-3-mini's April 2024 run, Phi-3.5-MoE, Phi-4-mini; 512 GPUs each, hours cover
``model_total``), chosen for stating GPU type, count, days and tokens before any was predicted;
no model change. Refit: e_max 0.598 -> 0.593, k_mem 0.82 -> 0.74, overlap 0.38 -> 1.0 (its
bound: weakly identified, earlier fits ranged 0.38-1.0), moe_efficiency 0.480 -> 0.492, the rest
within 0.005. As typed (49 whole runs) 17.2%/63% -> 17.0%/65%; throughput LOSO 18.0% -> 18.8%;
full-input whole-run 22.3% -> 21.0%; band coverage 83% -> 84% (75/88/83% by GPU bucket); median
signed error by GPU bucket -15.3/-21.3/+8.1% -> -15.4/-17.8/+4.9%. Kept: data, not a model
choice, so the keep rule above (for model changes) was not applied; its throughput clause would
have failed by 0.3 points.

Sources in ``VALIDATION_ONLY`` are scored, never fitted: trainbill's own H200 measurements
(2026-12-04; one GPU, eager PyTorch, a whole step). Both ways of letting them shape the model were
tried and cut the unseen-source figures of the other rows (fit 2026-12-04, 75 rows):
fitted as a 40th source, step_overhead_s 0.347 -> 0.252 and overlap 0.78 -> 0.97, throughput LOSO
17.3% -> 21.0% (the three rows' own errors included), as-typed whole-run 16.9% -> 21.8%, though
full-input whole-run 24.5% -> 22.7% and its training-run subset 23.0% -> 18.5%; and with
step_overhead_s held at 0 (what the measurements say of a one-GPU step: with no per-step overhead
the modelled kernel efficiency is within -8%..+4% of all three), the fit raised k_mem 1.23 -> 5.83
instead, throughput LOSO 23.9%, as-typed 25.3%, full-input whole-run 19.5%, training-run subset
14.1%. The constant per-step overhead stands for something the whole runs need and the single-GPU
steps do not have (data loading, logging, the synchronised optimizer and clipping at scale), so
with it the model under-predicts a single node's throughput by 39-64%; the rows say so in
``benchmarks/accuracy.py``.
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from published_runs import Case, cases, gpu_counts_published, naive, predict, predict_typed

from trainbill.catalog import Catalog, load_catalog
from trainbill.timemodel import FitParams

OUT = ROOT / "src" / "trainbill" / "catalog" / "data" / "time_model_fit.toml"
NAMES = ("e_max", "k_mem", "eta_fp8", "overlap", "step_overhead_s", "immaturity", "moe_efficiency")
START = (0.7, 1.0, 0.7, 0.5, 0.1, 0.2, 0.7)
BOUNDS = ((0.2, 1.5), (0.0, 20.0), (0.3, 1.0), (0.0, 1.0), (0.0, 2.0), (0.0, 0.9), (0.1, 1.0))
MOE = NAMES.index("moe_efficiency")
UNITS = {
    "e_max": "matmul efficiency ceiling (fraction of BF16 peak)",
    "k_mem": "memory-bound time per matmul time x d_model / (BF16 peak FLOP/s per HBM byte/s)",
    "eta_fp8": "FP8 matmul efficiency relative to BF16",
    "overlap": "fraction of compute that hides communication",
    "step_overhead_s": "seconds per optimizer step of host/optimizer/launch work (not FLOPs)",
    "immaturity": (
        "share of mature kernel efficiency missing at a chip's launch (decays over "
        "time.maturity_tau_years)"
    ),
    "moe_efficiency": (
        "kernel efficiency of an MoE model relative to a dense model with the same active FLOPs"
    ),
}
ITERS = 400
#: Sources scored but never fitted (source_key -> why; module docstring).
VALIDATION_ONLY = {
    "trainbill-h200-2026-12-04": "one-GPU eager PyTorch steps: fitting them cut the other "
    "sources' unseen-source accuracy (module docstring)",
}
#: Each tail of the forecast's error band: 10% below, 10% above (an 80% interval).
BAND_ALPHA = 0.10
#: The band is computed separately for three cluster sizes, the buckets the bias is reported in
#: (``benchmarks/accuracy.py``): independently gathered whole runs were under-predicted most "on
#: small-to-mid clusters of 32-1,024 GPUs" (issue #43), and the runs here lean the same way, so
#: one band for all sat too low for those clusters and too wide for large ones. Tried on the
#: fit of 2026-12-05 (coverage of bands computed without the run's source, <=128 / 129-1,024 /
#: >1,024 GPUs): one band 62/86/88%; two buckets split at 1,024 GPUs 62/93/83%, at 512 62/86/88%,
#: at 256 75/79/88%; these three 75/86/83% (83% overall in every case), the only split with every
#: bucket in 75-90%. A bucket of fewer than 9 runs (<=128 GPUs: 8) has no 80% order statistic,
#: so its band is its runs' whole range (``error_band``).
BAND_BUCKETS = (("small_cluster", 128), ("mid_cluster", 1024), ("large_cluster", None))


@functools.cache
def _catalog() -> Catalog:
    return load_catalog()


def _params(x: Sequence[float]) -> FitParams:
    c = [min(max(v, lo), hi) for v, (lo, hi) in zip(x, BOUNDS, strict=True)]
    return FitParams(**dict(zip(NAMES, c, strict=True)), **_held())


def _held() -> dict[str, float]:
    """The FitParams fields held at their catalog values (not fitted)."""
    cat = _catalog()
    return {"k_attn": float(cat.value("time.unfused_attention_bytes_per_score")),
            "maturity_tau_years": float(cat.value("time.maturity_tau_years"))}  # fmt: skip


def loss(x: Sequence[float], rows: Sequence[Case]) -> float:
    """Sum of squared log(predicted / published) over ``rows``."""
    cat = _catalog()
    fp = _params(x)
    return sum(math.log(predict(c, cat, fp) / c.published) ** 2 for c in rows)


def nelder_mead(
    fn: Callable[[tuple[float, ...]], float], x0: tuple[float, ...], iters: int = ITERS
) -> tuple[float, ...]:
    """Plain Nelder-Mead (deterministic), enough for six smooth-ish parameters."""
    n = len(x0)
    simplex = [tuple(x0)] + [
        tuple(
            v * (1.25 if i == j else 1.0) + (0.05 if i == j and v == 0 else 0)
            for j, v in enumerate(x0)
        )
        for i in range(n)
    ]
    vals = [fn(p) for p in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        simplex, vals = [simplex[i] for i in order], [vals[i] for i in order]
        centroid = tuple(sum(p[k] for p in simplex[:-1]) / n for k in range(n))
        refl = tuple(centroid[k] + (centroid[k] - simplex[-1][k]) for k in range(n))
        fr = fn(refl)
        if fr < vals[0]:
            exp = tuple(centroid[k] + 2 * (centroid[k] - simplex[-1][k]) for k in range(n))
            fe = fn(exp)
            simplex[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = refl, fr
        else:
            con = tuple(centroid[k] + 0.5 * (simplex[-1][k] - centroid[k]) for k in range(n))
            fc = fn(con)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = con, fc
            else:
                best = simplex[0]
                simplex = [best] + [
                    tuple(best[k] + 0.5 * (p[k] - best[k]) for k in range(n)) for p in simplex[1:]
                ]
                vals = [vals[0]] + [fn(p) for p in simplex[1:]]
    return simplex[min(range(n + 1), key=lambda i: vals[i])]


def fit(
    rows: Sequence[Case], start: Sequence[float] = START, passes: int = 2, iters: int = ITERS
) -> FitParams:
    """Fit on ``rows``: Nelder-Mead, restarted from its own result; rounded to 4 decimals.

    Without an MoE row nothing informs ``moe_efficiency``: it is held at 1 (dense) and not searched.
    """
    has_moe = any(c.active_params is not None and c.active_params < c.params for c in rows)
    x = tuple(start) if has_moe else tuple(v for i, v in enumerate(start) if i != MOE)

    def full(p: Sequence[float]) -> tuple[float, ...]:
        return tuple(p) if has_moe else (*p[:MOE], 1.0, *p[MOE:])

    bounds = BOUNDS if has_moe else tuple(b for i, b in enumerate(BOUNDS) if i != MOE)
    for _ in range(passes):
        x = nelder_mead(
            lambda p: loss(full(p), rows),
            tuple(min(max(v, lo), hi) for v, (lo, hi) in zip(x, bounds, strict=True)),
            iters,
        )
    raw = _params(full(x))
    return FitParams(**{k: round(getattr(raw, k), 4) for k in NAMES}, **_held())


def fitted(rows: Sequence[Case]) -> list[Case]:
    """The rows the fit uses: every row except those of a ``VALIDATION_ONLY`` source and the
    whole runs whose source does not state the GPU count (``gpu_counts_published``; module
    docstring): both are scored, never fitted."""
    stated = gpu_counts_published()
    return [
        c
        for c in rows
        if c.source_key not in VALIDATION_ONLY and (c.kind != "whole_run" or c.id in stated)
    ]


def cross_validate(
    rows: Sequence[Case], full: FitParams, *, software_date: date, iters: int = 150
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Leave-one-SOURCE-out: each source's rows predicted by a refit on every other source.

    A source is one document (``Case.source_key``: a paper, a model card, one benchmark sweep):
    leaving out one row of a sweep keeps its siblings, which share the row's software, cluster
    and conventions, in the fit and flatters it. Returns (full-input predictions, and for
    whole-run rows the prediction from the flags a user types, ``predict_typed``, and the same
    with ``--run-date`` the run's date, as a back-test is typed), all by row id. Each refit
    starts from the full fit (one Nelder-Mead pass) to keep the run to minutes.
    """
    pred: dict[str, float] = {}
    typed: dict[str, float] = {}
    dated: dict[str, float] = {}
    start = [getattr(full, k) for k in NAMES]
    for key in sorted({c.source_key for c in rows}):
        held = [c for c in rows if c.source_key == key]
        fp = fit(
            fitted([c for c in rows if c.source_key != key]), start=start, passes=1, iters=iters
        )
        for c in held:
            pred[c.id] = predict(c, _catalog(), fp)
            if c.kind == "whole_run":
                typed[c.id] = predict_typed(c, _catalog(), fp, software_date=software_date)
                dated[c.id] = predict_typed(
                    c, _catalog(), fp, software_date=software_date, dated=True
                )
    return pred, typed, dated


def error_band(rows: Sequence[Case], pred: dict[str, float]) -> tuple[float, float]:
    """The 80% band of published / predicted over ``pred``'s rows: the multipliers that turn a
    forecast into an interval, read from cross-validated (never in-sample) predictions.

    The ends are order statistics chosen as split conformal prediction chooses them (Vovk,
    Gammerman and Shafer 2005; Lei et al. 2018, "Distribution-free predictive inference for
    regression", JASA 113:1094): of n sorted ratios, the floor(0.1 (n + 1))-th smallest and the
    ceil(0.9 (n + 1))-th. A new run drawn like these falls between them with probability at
    least 80%. The plain P10/P90 of the same ratios, interpolated, covers only
    0.8 (n - 1) / (n + 1) of new runs (76% with the 40-odd runs another source's band is
    computed from, which is what ``band_coverage`` measured with it: 76%, fit 2026-12-04).
    Below 9 rows no order statistic reaches 80%; the band is then the rows' whole range.
    """
    ratios = sorted(c.published / pred[c.id] for c in rows if c.id in pred)
    n = len(ratios)
    lo = min(max(math.floor(BAND_ALPHA * (n + 1)), 1), n)
    hi = min(max(math.ceil((1 - BAND_ALPHA) * (n + 1)), 1), n)
    return ratios[lo - 1], ratios[hi - 1]


def cluster_bucket(gpus: int) -> str:
    """The band bucket of a run on ``gpus`` GPUs (``BAND_BUCKETS``)."""
    for name, most in BAND_BUCKETS:
        if most is None or gpus <= most:
            return name
    raise AssertionError  # pragma: no cover - the last bucket has no limit


def bucket_rows(rows: Sequence[Case], bucket: str) -> list[Case]:
    """The rows whose GPU count falls in ``bucket``."""
    return [c for c in rows if cluster_bucket(c.gpus) == bucket]


def median_ratio(rows: Sequence[Case], pred: dict[str, float]) -> float:
    """The median of published / predicted over ``pred``'s rows: where the band's mass sits.

    The band alone is skewed (0.70-1.77 around a median near 1): a lognormal fitted to its two
    ends has the median sqrt(P10 x P90) ~ 1.11, which made the simulation's median run 11%
    longer than the forecast of a model that is median-unbiased on unseen runs."""
    return statistics.median(c.published / pred[c.id] for c in rows if c.id in pred)


def band_coverage(
    rows: Sequence[Case], pred: dict[str, float], *, by_bucket: bool = False
) -> float:
    """Share of rows inside the band (``error_band``) computed WITHOUT their own source's residuals:
    the band's honesty on a source it has not seen (goal: about 80%). ``by_bucket``: each row's
    band is its cluster-size bucket's (``BAND_BUCKETS``), from that bucket's other sources."""
    inside = total = 0
    for key in {c.source_key for c in rows if c.id in pred}:
        for c in rows:
            if c.id not in pred or c.source_key != key:
                continue
            others = [
                o
                for o in rows
                if o.id in pred
                and o.source_key != key
                and (not by_bucket or cluster_bucket(o.gpus) == cluster_bucket(c.gpus))
            ]
            lo, hi = error_band(others, pred)
            total += 1
            inside += lo <= c.published / pred[c.id] <= hi
    return inside / total if total else math.nan


def summary(rows: Sequence[Case], pred: dict[str, float]) -> dict[str, tuple[int, float, float]]:
    """Per kind: (rows, median |error|, share within ±25%) over the rows ``pred`` covers."""
    out = {}
    for kind in ("throughput", "whole_run"):
        errs = [abs(pred[c.id] / c.published - 1) for c in rows if c.kind == kind and c.id in pred]
        if errs:
            out[kind] = (
                len(errs),
                statistics.median(errs),
                sum(e <= 0.25 for e in errs) / len(errs),
            )
    return out


def _bucket_band_lines(rows: Sequence[Case], typed: dict[str, float], fit_date: str) -> list[str]:
    """The band of each cluster-size bucket (``BAND_BUCKETS``) as catalog assumptions: its
    GPU limit, P10, P50 and P90 of published / predicted over the bucket's whole runs, each
    predicted leave-one-source-out from the flags a user types."""
    out: list[str] = []
    for name, most in BAND_BUCKETS:
        group = [c for c in bucket_rows(rows, name) if c.id in typed]
        lo, hi = error_band(group, typed)
        below = BAND_BUCKETS[[b[0] for b in BAND_BUCKETS].index(name) - 1][1] if out else None
        where = (
            (f"up to {most:,} GPUs" if below is None else f"{below + 1:,} to {most:,} GPUs")
            if most is not None
            else f"more than {below:,} GPUs"
        )
        src = (
            f"80% split-conformal band and median of published / predicted GPU-hours over the "
            f"{len(group)} whole runs on {where} (issue #43: small-to-mid clusters were "
            "under-predicted; below 9 runs the band is their whole range), each predicted "
            "leave-one-source-out from the flags a user types (tools/fit_time_model.py), fit "
            f"{fit_date}"
        )
        if most is not None:
            out.append(
                f'{name}_max_gpus = {{ value = {most}, unit = "GPUs", source = "{src}", '
                f'as_of = "{fit_date}" }}'
            )
        for q, v in (("p10", lo), ("p50", median_ratio(group, typed)), ("p90", hi)):
            out.append(
                f'{name}_{q} = {{ value = {v:.4f}, unit = "actual / forecast GPU-hours, {q} '
                f'of the band on {where}", source = "{src}", as_of = "{fit_date}" }}'
            )
    return out


def training_runs(rows: Sequence[Case]) -> list[Case]:
    """Whole runs whose published hours are one pre-training run (``gpu_hours_cover``
    ``training_run``): what a forecast describes, without stages the source does not split out."""
    return [c for c in rows if c.kind == "whole_run" and c.hours_cover == "training_run"]


def render(
    fp: FitParams,
    fit_date: str,
    cv: dict[str, float],
    typed: dict[str, float],
    dated: dict[str, float],
) -> str:
    """The TOML: [time.fit] parameters and the cross-validated error band as catalog
    assumptions; [report] in-sample, leave-one-source-out, as-typed and naive figures."""
    rows = list(cases())
    cat = _catalog()
    pred = {c.id: predict(c, cat, fp) for c in rows}
    base = {c.id: naive(c, cat) for c in rows}
    # Cross-validated summaries are taken from the residuals as written (4 decimals), so the
    # file is self-consistent and re-rendering it from its own residuals reproduces it exactly.
    published = {c.id: c.published for c in rows}
    cv = {k: published[k] * (1.0 + round(v / published[k] - 1.0, 4)) for k, v in cv.items()}
    typed = {k: published[k] * (1.0 + round(v / published[k] - 1.0, 4)) for k, v in typed.items()}
    dated = {k: published[k] * (1.0 + round(v / published[k] - 1.0, 4)) for k, v in dated.items()}
    lo, hi = error_band(rows, typed)
    n = len(fitted(rows))
    n_sources = len({c.source_key for c in fitted(rows)})
    src = (f"Least-squares fit (log error) of tools/fit_time_model.py to {n} rows of "
           f"published_runs.csv from {n_sources} sources, fit {fit_date}")  # fmt: skip
    band_src = (
        f"80% split-conformal band (order statistics floor(0.1(n+1)) and ceil(0.9(n+1))) of "
        f"published / predicted GPU-hours over {len(typed)} whole runs, each "
        "predicted leave-one-source-out from the flags a user types (tools/fit_time_model.py), "
        f"fit {fit_date}"
    )
    lines = ["# Generated by tools/fit_time_model.py; do not edit by hand.", "[time.fit]"]
    for k in NAMES:
        lines.append(
            f'{k} = {{ value = {getattr(fp, k):.4f}, unit = "{UNITS[k]}", source = "{src}", '
            f'as_of = "{fit_date}" }}'
        )
    lines += ["", "[time.error_band]"]
    lines.append(
        f'whole_run_p10 = {{ value = {lo:.4f}, unit = "actual / forecast GPU-hours, lower end '
        f'of the 80% band", source = "{band_src}", as_of = "{fit_date}" }}'
    )
    mid_src = (
        f"median of published / predicted GPU-hours over the same {len(typed)} whole runs, "
        f"each predicted leave-one-source-out from the flags a user types, fit {fit_date}: with "
        "the band's ends, the three quantiles a simulation's time-model error reproduces"
    )
    lines.append(
        f'whole_run_p50 = {{ value = {median_ratio(rows, typed):.4f}, unit = "actual / '
        f'forecast GPU-hours, median", source = "{mid_src}", as_of = "{fit_date}" }}'
    )
    lines.append(
        f'whole_run_p90 = {{ value = {hi:.4f}, unit = "actual / forecast GPU-hours, upper end '
        f'of the 80% band", source = "{band_src}", as_of = "{fit_date}" }}'
    )
    lines += _bucket_band_lines(rows, typed, fit_date)
    lines += ["", "[report]", f'fit_date = "{fit_date}"', f"rows = {n}", f"sources = {n_sources}"]
    lines.append(f"validation_only_rows = {len(rows) - n}")
    for label, p in (("", pred), ("loso_", cv), ("naive_", base)):
        for kind, (_, med, within) in summary(rows, p).items():
            lines.append(f"{label}{kind}_median_abs_error = {med:.4f}")
            lines.append(f"{label}{kind}_within_25pct = {within:.4f}")
    _, med, within = summary(rows, typed)["whole_run"]
    lines.append(f"typed_loso_whole_run_median_abs_error = {med:.4f}")
    lines.append(f"typed_loso_whole_run_within_25pct = {within:.4f}")
    _, med, within = summary(rows, dated)["whole_run"]
    lines.append(f"dated_loso_whole_run_median_abs_error = {med:.4f}")
    lines.append(f"dated_loso_whole_run_within_25pct = {within:.4f}")
    runs = training_runs(rows)
    for label, p in (("typed_loso_", typed), ("loso_", cv), ("naive_", base)):
        _, med, within = summary(runs, p)["whole_run"]
        lines.append(f"{label}training_run_median_abs_error = {med:.4f}")
        lines.append(f"{label}training_run_within_25pct = {within:.4f}")
    lines.append(f"typed_band_coverage_unseen_source = {band_coverage(rows, typed):.4f}")
    lines.append(
        "typed_bucket_band_coverage_unseen_source = "
        f"{band_coverage(rows, typed, by_bucket=True):.4f}"
    )
    lines += ["", "[report.residuals]", "# row id = predicted / published - 1 (in-sample)"]
    lines += [f'"{c.id}" = {pred[c.id] / c.published - 1:.4f}' for c in rows]
    lines += [
        "",
        "[report.loso_residuals]",
        "# row id = predicted / published - 1 with the row's whole source left out of the fit",
    ]
    lines += [f'"{c.id}" = {cv[c.id] / c.published - 1:.4f}' for c in rows]
    lines += [
        "",
        "[report.typed_loso_residuals]",
        (
            "# whole-run row id = predicted / published - 1 from the flags alone, the row's source "
            "left out"
        ),
    ]
    lines += [f'"{c.id}" = {typed[c.id] / c.published - 1:.4f}' for c in rows if c.id in typed]
    lines += [
        "",
        "[report.dated_loso_residuals]",
        "# the same with --run-date the run's own date (a back-test on the run's software)",
    ]
    lines += [f'"{c.id}" = {dated[c.id] / c.published - 1:.4f}' for c in rows if c.id in dated]
    return "\n".join(lines) + "\n"


def _stored() -> tuple[str, FitParams, dict[str, float], dict[str, float], dict[str, float]]:
    """The stored fit and its cross-validated predictions, read back from ``OUT``
    (``--rerender``: a change to what is rendered from them needs no refit; the residuals are
    written to 4 decimals and ``render`` rounds to the same, so the figures are reproduced)."""
    import tomllib

    doc = tomllib.loads(OUT.read_text(encoding="utf-8"))
    fit_doc = doc["time"]["fit"]
    fp = FitParams(**{k: float(fit_doc[k]["value"]) for k in NAMES}, **_held())
    published = {c.id: c.published for c in cases()}
    report = doc["report"]

    def back(section: str) -> dict[str, float]:
        return {k: published[k] * (1.0 + float(v)) for k, v in report[section].items()}

    return (
        str(report["fit_date"]),
        fp,
        back("loso_residuals"),
        back("typed_loso_residuals"),
        back("dated_loso_residuals"),
    )


def main() -> int:
    """Fit, cross-validate by source, write the TOML atomically, print the figures."""
    if sys.argv[1:2] == ["--rerender"]:
        fit_date, fp, cv, typed, dated = _stored()
        text = render(fp, fit_date, cv, typed, dated)
        OUT.with_suffix(".tmp").write_text(text, encoding="utf-8")
        OUT.with_suffix(".tmp").replace(OUT)
        print(f"re-rendered {OUT} from its own fit and residuals ({fit_date})")
        return 0
    fit_date = sys.argv[1] if len(sys.argv) > 1 else date.today().isoformat()  # noqa: DTZ011
    rows = list(cases())
    fp = fit(fitted(rows))
    print(fp, flush=True)
    cv, typed, dated = cross_validate(rows, fp, software_date=date.fromisoformat(fit_date))
    text = render(fp, fit_date, cv, typed, dated)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(OUT)
    for kind, (k, med, within) in summary(rows, cv).items():
        print(f"LOSO {kind}: {k} rows, median |error| {med:.1%}, within ±25%: {within:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
