"""Kernel efficiency: seconds per model FLOP from the matmul share, the memory-bound share,
software maturity and MoE efficiency (or a measured MFU)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Accelerator
from trainbill.timemodel.records import _BYTES_PER_BF16, _HEAD_DIM, _Query
from trainbill.timemodel.work import _Work


@record
class _Kernel:
    """Seconds per model FLOP and what made them: the kernel-efficiency step's result."""

    sec_per_flop: float
    kernel_mfu: float
    fp8: bool
    g: float
    m: float
    #: The unfused-attention share of ``m`` (0 with fused attention).
    m_attn: float
    maturity: float
    moe_eff: float
    #: The selective scans' memory-bound share of ``m`` (0 for a transformer).
    m_ssm: float = 0.0
    #: Bytes per activation element relative to BF16 (2 for FP32/TF32 activations).
    byte_scale: float = 1.0


def _fp8_usable(q: _Query) -> bool:
    """Whether the matmuls run at FP8 speed.

    FP8 pays scaling and casts (η_fp8 < 1); where its peak is no higher than BF16's (Trainium1:
    190 and 190 TFLOP/s) it would be slower, and nobody trains that way.
    """
    fp8_peak = q.accelerator.peak_fp8_tflops
    if q.precision != "fp8" or fp8_peak is None:
        return False
    return not q.fp.eta_fp8 * fp8_peak <= q.bf16


def _straggler_share(straggler_cv: float, gpus: int) -> float:
    """The straggler stall: the expected maximum of G Gaussian step times, cv · sqrt(2 ln G);
    elementwise over a node sweep's array of GPU counts (its typing: int)."""
    g: Any = gpus
    if isinstance(g, np.ndarray):
        logs = np.log(np.maximum(g, 1).astype(np.float64))
        share: Any = np.where(g > 1, straggler_cv * np.sqrt(2.0 * logs), 0.0)
        return float(share) if share.ndim == 0 else share
    return straggler_cv * math.sqrt(2.0 * math.log(gpus)) if gpus > 1 else 0.0


def _machine_balance(accelerator: Accelerator) -> float:
    """FLOP per HBM byte: dense BF16 peak over HBM bandwidth (datasheet figures)."""
    return accelerator.peak_bf16_tflops * 1e12 / (accelerator.hbm_tbps * 1e12)


def _kernel(q: _Query, w: _Work, *, fp8: bool) -> _Kernel:
    """The modelled kernel efficiency: matmul share g, memory-bound share m, maturity, MoE."""
    fp, bf16 = q.fp, q.bf16
    flop_per_byte = _machine_balance(q.accelerator)
    m = fp.k_mem * flop_per_byte / w.d_model
    m_attn = 0.0
    if not q.fused_attention:
        heads = w.d_model / _HEAD_DIM
        m_attn = fp.k_attn * w.layers * heads * q.seq_len * flop_per_byte / w.flops_per_token
        m += m_attn
    # Element-wise work moves each activation's bytes: FP32/TF32 keep 4-byte activations.
    byte_scale = _activation_bytes(q.precision) / _BYTES_PER_BF16
    m *= byte_scale
    m_ssm = 0.0
    if w.ssm_blocks:
        # The Mamba blocks' scans, conv and gates: bytes per inner channel per token, through
        # HBM like the element-wise work above (time.ssm_bytes_per_channel).
        expand = float(q.catalog.value("time.ssm_expand"))
        moved = float(q.catalog.value("time.ssm_bytes_per_channel")) * byte_scale
        m_ssm = w.ssm_blocks * expand * w.d_model * moved * flop_per_byte / w.flops_per_token
        m += m_ssm
    g = _matmul_share(q, fp8=fp8)
    age = q.software_age_years
    maturity = 1.0 if age is None else fp.maturity(age)
    moe_eff = fp.moe_efficiency if w.sparse else 1.0
    sec_per_flop = (g + m) / (bf16 * 1e12 * fp.e_max * maturity * moe_eff)
    kernel_mfu = 1.0 / (sec_per_flop * q.peak * 1e12)
    return _Kernel(sec_per_flop=sec_per_flop, kernel_mfu=kernel_mfu, fp8=fp8, g=g, m=m,
                   m_attn=m_attn, maturity=maturity, moe_eff=moe_eff, m_ssm=m_ssm,
                   byte_scale=byte_scale)  # fmt: skip


def _activation_bytes(precision: str) -> float:
    """Bytes per activation (and gradient) element: 4 in FP32/TF32 training (TF32 is a matmul
    mode: its tensors are FP32), 2 in FP16/BF16 and FP8 mixed precision (FP8 casts only the
    matmul inputs; activations and gradients stay BF16)."""
    return 4.0 if precision in ("fp32", "tf32") else _BYTES_PER_BF16


def _matmul_share(q: _Query, *, fp8: bool) -> float:
    """Matmul time per FLOP relative to BF16 at the same efficiency, g.

    FP8: 1 / (η_fp8 · FP8 peak / BF16 peak) (scaling and casts cost η_fp8). Otherwise the
    BF16 peak over the precision's (``Accelerator.precision_peak``): 1 for BF16, and for FP16
    on every part that runs both at one rate; 8× for FP32 on a V100 (125 / 15.7), ~2× for TF32
    on an A100 (312 / 156). An FP8 request the part cannot speed up runs at BF16 speed (g = 1).
    """
    if fp8:
        return 1.0 / (q.fp.eta_fp8 * q.peak / q.bf16)
    if q.precision == "fp8":
        return 1.0
    return q.bf16 / q.peak


def _measured_kernel(k: _Kernel, measured_mfu: float, peak: float) -> _Kernel:
    """A measured MFU (``trainbill profile``) in place of the modelled kernel efficiency."""
    return replace(k, sec_per_flop=1.0 / (measured_mfu * peak * 1e12), kernel_mfu=measured_mfu)
