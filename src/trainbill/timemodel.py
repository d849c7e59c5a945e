"""Time model: from model size, tokens and cluster to compute hours and synchronization stall.

Why a model and not a constant MFU: the bill is hours × price, and quotes go wrong in the hours.
Achieved throughput depends on the accelerator and precision, on how much gradient traffic
must cross the inter-node network per step (and how much of it hides behind compute), and on
the slowest GPU in every step. Each factor is reported so ``--explain`` can show it.

Formulas (every constant comes from the catalog's ``[time]`` and ``[reliability]``
assumptions):

* training FLOPs = 6 · N_active · D (Kaplan et al. 2020, arXiv 2001.08361, dense transformer
  forward+backward; MoE uses active parameters per token), plus attention
  12 · layers · d_model · seq_len · D when the shape is known (Narayanan et al. 2021,
  arXiv 2104.04473, Eq. 3 without recompute; PaLM appendix B).
* compute time = FLOPs / (GPUs · peak(precision) · base MFU(precision)).
* per-step inter-node communication = volume_factor · 2 bytes · N_total · (n−1)/n
  / (node network bandwidth · efficiency); exposed = max(0, comm − overlap · step compute).
* straggler stall = cv · sqrt(2 ln G): the expected maximum of G Gaussian step times
  exceeds the mean by about that many standard deviations (extreme-value approximation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainbill.catalog import Accelerator, Catalog, Instance

__all__ = ["TimeEstimate", "estimate_time", "training_flops"]

_SECONDS_PER_HOUR = 3600.0
_BYTES_PER_BF16 = 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeEstimate:
    """How long the pure training takes and how much synchronization adds, with reasons."""

    compute_hours: float
    comm_stall_fraction: float
    straggler_fraction: float
    flops: float | None
    peak_tflops_per_gpu: float
    base_mfu: float | None
    factors: tuple[tuple[str, str], ...]

    @property
    def sync_stall_fraction(self) -> float:
        """Extra wall-clock per hour of compute lost to communication and stragglers."""
        return self.comm_stall_fraction + self.straggler_fraction

    @property
    def effective_mfu(self) -> float | None:
        """Model FLOPs over (GPUs · peak · compute+sync time); None without a model size."""
        if self.base_mfu is None:
            return None
        return self.base_mfu / (1.0 + self.sync_stall_fraction)


def training_flops(
    *,
    active_params: float,
    tokens: float,
    layers: int | None = None,
    d_model: int | None = None,
    seq_len: int | None = None,
) -> float:
    """6·N·D plus attention FLOPs when layers, width and sequence length are known."""
    flops = 6.0 * active_params * tokens
    if layers is not None and d_model is not None and seq_len is not None:
        flops += 12.0 * layers * d_model * seq_len * tokens
    return flops


def estimate_time(
    *,
    catalog: Catalog,
    accelerator: Accelerator,
    instance: Instance,
    nodes: int,
    precision: str,
    hours: float | None,
    params: float | None,
    active_params: float | None,
    tokens: float | None,
    global_batch_tokens: float,
    seq_len: int,
    layers: int | None = None,
    d_model: int | None = None,
    straggler_cv: float,
) -> TimeEstimate:
    """Estimate compute hours and the sync-stall fraction for a cluster.

    When ``hours`` is given it is taken as the wall-clock of pure training and only the stall
    is modelled; otherwise hours are derived from FLOPs and the base MFU.
    """
    gpus = nodes * instance.accelerator_count
    peak = accelerator.peak_tflops(precision)
    base_key = "time.base_mfu_fp8" if precision == "fp8" and accelerator.peak_fp8_tflops else "time.base_mfu_bf16"
    base_mfu = float(catalog.value(base_key))
    factors: list[tuple[str, str]] = [
        ("accelerator", f"{accelerator.name}: dense {precision} peak {peak:g} TFLOP/s ({accelerator.source})"),
        ("gpus", f"{nodes} × {instance.instance} × {instance.accelerator_count} = {gpus} accelerators"),
    ]
    if precision == "fp8" and accelerator.peak_fp8_tflops is None:
        factors.append(("precision", f"{accelerator.id} has no FP8 units: BF16 peak used"))
    n_active = active_params if active_params is not None else params
    flops: float | None = None
    if n_active is not None and tokens is not None:
        flops = training_flops(
            active_params=n_active, tokens=tokens, layers=layers, d_model=d_model, seq_len=seq_len
        )
        factors.append(("flops", f"6 × {n_active:.3g} active params × {tokens:.3g} tokens = {flops:.3g} FLOPs"))
    if hours is not None:
        compute_hours = hours
        factors.append(("hours", f"{hours:g} h of pure training, as given in the plan"))
    else:
        assert flops is not None  # the plan validator guarantees params and tokens
        compute_hours = flops / (gpus * peak * 1e12 * base_mfu) / _SECONDS_PER_HOUR
        factors.append(
            (
                "compute",
                f"{flops:.3g} / ({gpus} × {peak:g} TFLOP/s × base MFU {base_mfu:.2f}) = "
                f"{compute_hours:,.1f} h ({catalog.assumption(base_key).source})",
            )
        )

    # Exposed inter-node communication per step (data-parallel/FSDP gradient sync).
    comm_fraction = 0.0
    if params is not None and nodes > 1:
        volume = float(catalog.value("time.collective_volume_factor"))
        overlap = float(catalog.value("time.comm_overlap"))
        eff = float(catalog.value("time.network_efficiency"))
        model_bytes = _BYTES_PER_BF16 * params
        node_bw = instance.network_gbps / 8.0 * 1e9 * eff  # bytes/s per node
        comm_s = volume * model_bytes * (nodes - 1) / nodes / node_bw
        step_flops = 6.0 * (n_active or params) * global_batch_tokens
        step_s = step_flops / (gpus * peak * 1e12 * base_mfu)
        exposed = max(0.0, comm_s - overlap * step_s)
        comm_fraction = exposed / step_s
        factors.append(
            (
                "communication",
                f"per step {comm_s:.2f} s of gradient sync over {instance.network_gbps:g} Gbps × "
                f"{eff:.0%} vs {step_s:.2f} s compute (overlap {overlap:.0%}): exposed "
                f"{exposed:.2f} s = {comm_fraction:.1%} of compute",
            )
        )
    elif params is None:
        factors.append(("communication", "model size unknown: gradient sync not modelled"))
    straggler = straggler_cv * math.sqrt(2.0 * math.log(gpus)) if gpus > 1 else 0.0
    factors.append(
        (
            "stragglers",
            f"slowest of {gpus} GPUs: cv {straggler_cv:g} × sqrt(2 ln {gpus}) = {straggler:.1%} per step",
        )
    )
    return TimeEstimate(
        compute_hours=compute_hours,
        comm_stall_fraction=comm_fraction,
        straggler_fraction=straggler,
        flops=flops,
        peak_tflops_per_gpu=peak,
        base_mfu=base_mfu if flops is not None else None,
        factors=tuple(factors),
    )
