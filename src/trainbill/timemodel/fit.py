"""The time model's fitted parameters and its cross-validated error band (``time.fit.*``,
``time.error_band.*``): what ``tools/fit_time_model.py`` writes and the forecast reads."""

from __future__ import annotations

import math

from trainbill._record import record
from trainbill.catalog import Catalog


@record
class FitParams:
    """The few global parameters fitted to published runs (never one per row)."""

    e_max: float
    k_mem: float
    eta_fp8: float
    overlap: float
    step_overhead_s: float
    k_attn: float
    #: Kernel-efficiency shortfall of brand-new software on a new chip (fraction of e_max at
    #: launch); 0 turns the software-maturity factor off, as the hand-computed tests do.
    immaturity: float = 0.0
    #: Years over which that shortfall decays (an assumption, not fitted: see the catalog).
    maturity_tau_years: float = 1.0
    #: Kernel efficiency of an MoE model relative to a dense one of the same active size
    #: (grouped GEMMs over many small experts, token permutation, routing, load imbalance);
    #: 1 is a dense model's, as the hand-computed tests assume.
    moe_efficiency: float = 1.0

    def __post_init__(self) -> None:
        # The factor must stay in (0, 1]: immaturity 1 would divide by zero at launch, above 1
        # give negative hours, below 0 a chip faster than mature; τ <= 0 divides by zero or
        # overflows. The fit searches immaturity within [0, 0.9].
        if not 0.0 <= self.immaturity < 1.0:
            msg = (
                "immaturity must be in [0, 1) (share of mature efficiency missing at launch), got "
                f"{self.immaturity!r}"
            )
            raise ValueError(msg)
        if not 0.0 < self.moe_efficiency <= 1.0:
            msg = (
                "moe_efficiency must be in (0, 1] (share of a dense model's kernel efficiency), "
                f"got {self.moe_efficiency!r}"
            )
            raise ValueError(msg)
        if not (math.isfinite(self.maturity_tau_years) and self.maturity_tau_years > 0.0):
            msg = (
                "maturity_tau_years must be a finite number of years > 0, got "
                f"{self.maturity_tau_years!r}"
            )
            raise ValueError(msg)

    def maturity(self, age_years: float) -> float:
        """Share of mature kernel efficiency reached ``age_years`` after the chip's launch.

        Kernels, compilers and frameworks for a new architecture keep improving for years
        (MosaicML's first H100 runs in 2023 reached 0.72–0.80× their A100 MFU; NVIDIA's 2025
        Megatron-Bridge reaches far more on the same chip). A run before launch (an overlay
        chip dated in the future) counts as age 0. Always in (0, 1].
        """
        if math.isnan(age_years):
            msg = (
                "software age is NaN: give the years from the accelerator's launch to the run, or "
                "None if unknown"
            )
            raise ValueError(msg)
        return 1.0 - self.immaturity * math.exp(-max(age_years, 0.0) / self.maturity_tau_years)


@record
class BandQuantiles:
    """The time model's cross-validated error for a cluster: actual / forecast GPU-hours at
    P10, P50 and P90 (``time.error_band``), and which cluster-size bucket gave them."""

    p10: float
    p50: float
    p90: float
    #: In words: "clusters of up to 128 GPUs", "of 129 to 1,024" or "of more than 1,024".
    bucket: str
    source: str


def error_band_quantiles(catalog: Catalog, gpus: int) -> BandQuantiles:
    """The error band of a whole run on ``gpus`` GPUs: its cluster-size bucket's.

    Why by bucket: on runs it was not fitted to, the model under-predicts small and mid-size
    clusters' GPU-hours more than large ones' (issue #43), so one band for every cluster sat
    too low for the first and too wide for the second; each bucket's P10/P50/P90 are read from
    its own leave-one-source-out residuals (``tools/fit_time_model.py``).
    """
    below = 0
    name, words = "large_cluster", ""
    for bucket in ("small_cluster", "mid_cluster"):
        most = int(catalog.value(f"time.error_band.{bucket}_max_gpus"))
        if gpus <= most:
            name = bucket
            words = (
                f"clusters of {below + 1:,} to {most:,} GPUs"
                if below
                else (f"clusters of up to {most:,} GPUs")
            )
            break
        below = most
    words = words or f"clusters of more than {below:,} GPUs"
    key = f"time.error_band.{name}"
    return BandQuantiles(
        p10=float(catalog.value(f"{key}_p10")),
        p50=float(catalog.value(f"{key}_p50")),
        p90=float(catalog.value(f"{key}_p90")),
        bucket=words,
        source=catalog.assumption(f"{key}_p10").source,
    )


def fit_params(catalog: Catalog) -> FitParams:
    """The fitted parameters shipped in the catalog (``time.fit.*``)."""
    return FitParams(
        e_max=float(catalog.value("time.fit.e_max")),
        k_mem=float(catalog.value("time.fit.k_mem")),
        eta_fp8=float(catalog.value("time.fit.eta_fp8")),
        overlap=float(catalog.value("time.fit.overlap")),
        step_overhead_s=float(catalog.value("time.fit.step_overhead_s")),
        k_attn=float(catalog.value("time.unfused_attention_bytes_per_score")),
        immaturity=float(catalog.value("time.fit.immaturity")),
        maturity_tau_years=float(catalog.value("time.maturity_tau_years")),
        moe_efficiency=float(catalog.value("time.fit.moe_efficiency")),
    )
