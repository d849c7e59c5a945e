"""Memory feasibility: does one training step fit in an accelerator's HBM?

Why: the cheapest-looking plan is worthless if the model does not fit; and a plan that fits
only with full activation recompute pays ~33% more compute, which the time model must charge.

Per-GPU bytes (mixed-precision Adam, Rajbhandari et al. 2020 "ZeRO", arXiv 1910.02054):

* model state = ``state_bytes_per_param`` (16: bf16 weights 2 + grads 2 + fp32 master 4 +
  Adam m, v 8) × params / (tp · pp · dp), i.e. fully sharded (ZeRO-3/FSDP) over data-parallel
  ranks, plus a gather buffer of two layers' bf16 weights (FSDP prefetch) = 4 · params / (tp · L).
  MoE expert weights are laid out as MoE frameworks do (Megatron-Core's distributed optimizer,
  DeepSeek-V2/V3's ZeRO-1; FSDP over experts arrived only in Megatron-Core v0.15, 2025-11): each
  GPU of an expert-parallel group of ep holds its 1/ep of the experts' bf16 weights and
  gradients whole (4 bytes/param / (tp · pp · ep)), only their 12-byte optimizer state is
  sharded over all GPUs, and they are not in the gather buffer.
* activations per sequence per layer = 34 · seq · d_model / tp bytes (Korthikanti et al. 2022,
  arXiv 2205.05198, Eq. 2 with sequence parallelism and flash attention, so no s² term); a
  1F1B pipeline keeps ~L layers' worth in flight on its first stage. With full recompute only
  each layer's input (2 · seq · d_model / tp bytes) is kept, plus one layer's working set.
* usable HBM = hbm_gb × ``time.hbm_usable_fraction`` (CUDA context, NCCL buffers, fragmentation).

Offload: when the plan fits only if the fp32 optimizer state (12 bytes/param) lives in host
memory, it is reported as a warning, not an error; when even that does not fit, it is an error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.errors import MemoryFitError

__all__ = [
    "MemoryEstimate",
    "MemoryFitError",
    "MemoryGrid",
    "memory_grid",
    "memory_per_gpu",
    "min_gpus_to_fit",
]

_GB = 1e9
_ACT_BYTES_PER_TOKEN_LAYER = 34.0  # × d_model / tp (Korthikanti et al. 2022)
_CKPT_BYTES_PER_TOKEN_LAYER = 2.0  # bf16 layer input kept under full recompute
_OPTIMIZER_BYTES_PER_PARAM = 12.0  # fp32 master + Adam m, v: what ZeRO-Offload moves to host
_BF16_WEIGHT_AND_GRAD_BYTES = 4.0  # what ZeRO-1 keeps whole per rank: bf16 weights 2 + grads 2


@record
class MemoryEstimate:
    """Per-GPU memory of one layout, and how (if at all) it fits."""

    state_gb: float
    buffer_gb: float
    activations_gb: float
    usable_gb: float
    recompute: bool
    offload: bool

    @property
    def total_gb(self) -> float:
        """Bytes that must sit in HBM, in GB."""
        return self.state_gb + self.buffer_gb + self.activations_gb

    @property
    def fits(self) -> bool:
        """True when the per-GPU need is within usable HBM."""
        return self.total_gb <= self.usable_gb

    def describe(self) -> str:
        """One line for ``--explain``."""
        mode = "offloaded optimizer, " if self.offload else ""
        mode += "full activation recompute" if self.recompute else "no recompute"
        return (
            f"per GPU {self.state_gb:.1f} GB model state + {self.buffer_gb:.1f} GB gather buffer "
            f"+ {self.activations_gb:.1f} GB activations = {self.total_gb:.1f} GB of "
            f"{self.usable_gb:.1f} GB usable HBM ({mode})"
        )


def _estimate(
    *,
    params: float,
    layers: int,
    d_model: int,
    seq_len: int,
    state_bytes_per_param: float,
    tp: int,
    pp: int,
    dp: int,
    recompute: bool,
    offload: bool,
    expert_params: float = 0.0,
    ep: int = 1,
) -> tuple[float, float, float]:
    """(state, gather buffer, activations) bytes per GPU of one mode; elementwise where the
    layout's degrees (and the model's sizes) are NumPy arrays (the layout search over node
    counts), so each figure is written once."""
    per_param = state_bytes_per_param - (_OPTIMIZER_BYTES_PER_PARAM if offload else 0.0)
    whole = _BF16_WEIGHT_AND_GRAD_BYTES * expert_params
    state = (per_param * params - whole) / (tp * pp * dp) + whole / (tp * pp * ep)
    # (no gather buffer without data parallelism: a bool factor keeps it elementwise)
    buffer = 4.0 * (params - expert_params) / (tp * layers) * (dp > 1)
    token_layer = seq_len * d_model / tp
    if recompute:
        act = (
            layers * _CKPT_BYTES_PER_TOKEN_LAYER * token_layer
            + _ACT_BYTES_PER_TOKEN_LAYER * token_layer
        )
    else:
        act = layers * _ACT_BYTES_PER_TOKEN_LAYER * token_layer
    return state, buffer, act


@record
class MemoryGrid:
    """``memory_per_gpu`` of many layouts at once: each field an array over them (GB, and the
    mode each fits in), ``fits`` False where none does."""

    state_gb: Any
    buffer_gb: Any
    activations_gb: Any
    usable_gb: float
    recompute: Any
    offload: Any
    fits: Any

    def at(self, i: tuple[int, ...]) -> MemoryEstimate:
        """One layout's ``MemoryEstimate`` (an axis of length 1 broadcasts)."""
        i = tuple(k if d > 1 else 0 for k, d in zip(i, np.shape(self.state_gb), strict=True))
        return MemoryEstimate(
            state_gb=float(self.state_gb[i]),
            buffer_gb=float(self.buffer_gb[i]),
            activations_gb=float(self.activations_gb[i]),
            usable_gb=self.usable_gb,
            recompute=bool(self.recompute[i]),
            offload=bool(self.offload[i]),
        )

    def at_many(self, rows: Any, cols: Any) -> list[MemoryEstimate]:
        """``at((rows[j], cols[j]))`` for every j: ``chosen`` read out row by row."""
        got = self.chosen(rows, cols)
        figures = zip(
            *(np.broadcast_to(x, np.shape(rows)).tolist() for x in (
                got.state_gb, got.buffer_gb, got.activations_gb, got.recompute, got.offload,
            )), strict=True,
        )  # fmt: skip
        return [
            MemoryEstimate(
                state_gb=float(state),
                buffer_gb=float(buffer),
                activations_gb=float(act),
                usable_gb=self.usable_gb,
                recompute=bool(rec),
                offload=bool(off),
            )
            for state, buffer, act, rec, off in figures
        ]

    def chosen(self, rows: Any, cols: Any) -> MemoryEstimate:
        """One ``MemoryEstimate`` of the layouts ``(rows[j], cols[j])``: each figure an array
        over j (GB as float64, the modes as bool), read in one indexing (a node sweep's chosen
        layouts, kept as arrays: no record per node count)."""

        def read(x: Any, kind: Any) -> Any:
            r = rows if np.shape(x)[0] > 1 else 0
            c = cols if np.shape(x)[1] > 1 else 0
            return np.broadcast_to(np.asarray(x)[r, c], np.shape(rows)).astype(kind)

        # (arrays where the record's typing says float and bool: a sweep's layouts)
        state: Any = read(self.state_gb, np.float64)
        buffer: Any = read(self.buffer_gb, np.float64)
        act: Any = read(self.activations_gb, np.float64)
        recompute: Any = read(self.recompute, np.bool_)
        offload: Any = read(self.offload, np.bool_)
        return MemoryEstimate(
            state_gb=state, buffer_gb=buffer, activations_gb=act, usable_gb=self.usable_gb,
            recompute=recompute, offload=offload,
        )  # fmt: skip


def memory_grid(
    *,
    params: Any,
    layers: int,
    d_model: int,
    seq_len: Any,
    hbm_gb: float,
    usable_fraction: float,
    state_bytes_per_param: float,
    tp: Any,
    pp: Any,
    dp: Any,
    recompute: bool | None = None,
    expert_params: Any = 0.0,
    ep: Any = 1,
) -> MemoryGrid:
    """``memory_per_gpu`` elementwise over arrays of layouts: the cheapest mode each fits in
    (no recompute, then recompute, then offload), the last mode where none fits."""
    kw = {
        "params": params, "layers": layers, "d_model": d_model, "seq_len": seq_len,
        "state_bytes_per_param": state_bytes_per_param, "tp": tp, "pp": pp, "dp": dp,
        "expert_params": expert_params, "ep": ep,
    }  # fmt: skip
    usable = hbm_gb * usable_fraction
    modes = [False, True] if recompute is None else [recompute]
    shape = np.broadcast(tp, pp, dp, ep, seq_len, params, expert_params).shape
    out = [np.zeros(shape) for _ in range(3)]
    flags = [np.zeros(shape, dtype=bool) for _ in range(3)]  # recompute, offload, fits
    todo = np.ones(shape, dtype=bool)
    last = (True, modes[-1])
    for offload in (False, True):
        for rc in modes:
            if not todo.any():  # every layout placed: the later modes change nothing
                break
            parts = [b / _GB for b in _estimate(**kw, recompute=rc, offload=offload)]
            fits = parts[0] + parts[1] + parts[2] <= usable
            # the first mode that fits; where none does, the last one tried
            take = todo & (fits | ((offload, rc) == last))
            for o, v in zip(out, parts, strict=True):
                np.copyto(o, v, where=take)
            for o, v in zip(flags, (rc, offload, fits), strict=True):
                np.copyto(o, v, where=take)
            todo &= ~take
    return MemoryGrid(
        state_gb=out[0], buffer_gb=out[1], activations_gb=out[2], usable_gb=usable,
        recompute=flags[0], offload=flags[1], fits=flags[2],
    )  # fmt: skip


def memory_per_gpu(
    *,
    params: float,
    layers: int,
    d_model: int,
    seq_len: int,
    hbm_gb: float,
    usable_fraction: float,
    state_bytes_per_param: float,
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
    recompute: bool | None = None,
    expert_params: float = 0.0,
    ep: int = 1,
) -> MemoryEstimate:
    """The cheapest way this layout fits: no recompute, then recompute, then offload.

    ``recompute`` forces the activation mode (a published config said so); None lets the
    model choose. ``expert_params`` of an MoE model are split over ``ep`` expert-parallel
    ranks and kept whole there (ZeRO-1), the rest fully sharded.
    The returned estimate's ``fits`` is False when nothing fits.
    """
    grid = memory_grid(
        params=params, layers=layers, d_model=d_model, seq_len=seq_len, hbm_gb=hbm_gb,
        usable_fraction=usable_fraction, state_bytes_per_param=state_bytes_per_param,
        tp=tp, pp=pp, dp=dp, recompute=recompute, expert_params=expert_params, ep=ep,
    )  # fmt: skip
    return grid.at(())


def min_gpus_to_fit(
    *,
    params: float,
    layers: int,
    d_model: int,
    seq_len: int,
    hbm_gb: float,
    usable_fraction: float,
    state_bytes_per_param: float,
    gpus_per_node: int,
) -> int | None:
    """Fewest GPUs whose fully sharded state plus recomputed activations fit (no offload).

    Tensor parallelism across one node (tp = gpus_per_node) divides activations; the state
    is sharded over every GPU. None when even infinite sharding leaves no room.
    """
    tp = max(1, gpus_per_node)
    token_layer = seq_len * d_model / tp
    act = (layers * _CKPT_BYTES_PER_TOKEN_LAYER + _ACT_BYTES_PER_TOKEN_LAYER) * token_layer
    room = hbm_gb * usable_fraction * _GB - act - 4.0 * params / (tp * layers)
    if room <= 0:
        return None
    return max(1, math.ceil(state_bytes_per_param * params / room))
