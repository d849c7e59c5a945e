"""The layout search: tensor × pipeline × context × expert × data parallel, the fastest that
fits in memory, and the error that says why none does.

The search is written once over arrays: every (tp, pp, cp, ep) candidate of every node count
of a question is evaluated at once (``_layout_grid``), the node counts on axis 0 and the
candidates on axis 1, each node count's own bounds a validity mask. A single question is the
same search over one node count (``_choose_layout``); the planner asks for hundreds of node
counts in one call, its inputs built once over arrays of node counts (``_swept_space``), which
is what keeps a node sweep at array speed.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Accelerator
from trainbill.errors import SpecError
from trainbill.memory import (
    MemoryEstimate,
    MemoryFitError,
    MemoryGrid,
    memory_grid,
    min_gpus_to_fit,
)
from trainbill.timemodel._elementwise import least, most, where
from trainbill.timemodel.kernel import _activation_bytes, _Kernel
from trainbill.timemodel.records import (
    _BYTES_PER_BF16,
    _CP_MIN_SEQ,
    _RECOMPUTE_FACTOR,
    _SECONDS_PER_HOUR,
    Layout,
    _Query,
)
from trainbill.timemodel.work import _Work


def _dp_bandwidth(*, gpus: Any, gpn: int, tp: Any, intra_bw: float, node_bw: float) -> Any:
    """Effective bytes/s per GPU for a data-parallel all-reduce/all-gather/reduce-scatter.

    Inside one node the collective runs over NVLink. Across nodes NCCL runs it hierarchically
    (or as one ring per NIC): the node's ranks of a DP group first reduce over NVLink, then each
    moves only its 1/k share over its own NIC, so the group sees k NICs' worth of bandwidth,
    k = GPUs of the group per node = GPUs per node / tp. With tp = 1 that is the whole node's
    bandwidth (what nccl-tests report as bus bandwidth on multi-node H100/A100 clusters), with
    tp = GPUs per node one NIC. Never faster than NVLink. Elementwise over arrays.
    """
    share = np.maximum(1, gpn // tp)
    return np.where(gpus <= gpn, intra_bw, np.minimum(intra_bw, node_bw * share / gpn))


def _ring(n: Any) -> Any:
    """Share of the data a ring/hierarchical collective over n ranks moves per rank: (n − 1) / n
    (elementwise)."""
    return np.where(n > 1.0, (n - 1.0) / np.maximum(n, 1.0), 0.0)


def _pow2_upto(limit: int) -> list[int]:
    out, p = [], 1
    while p <= limit:
        out.append(p)
        p *= 2
    return out


def _pow2_floor(limit: Any) -> Any:
    """The largest power of two not above ``limit`` (>= 1), elementwise over an array of limits
    (a node sweep's: an int64 array of its shape)."""
    if not isinstance(limit, np.ndarray):
        return _pow2_upto(limit)[-1]
    values, inverse = np.unique(limit, return_inverse=True)
    table = np.array([_pow2_upto(int(v))[-1] for v in values], dtype=np.int64)
    return table[inverse].reshape(limit.shape)


@record
class _Space:
    """Everything the layout search holds fixed: the cluster, the model and the step's work."""

    gpus: int
    gpn: int
    params: float
    layers: int
    d_model: int
    seq_len: int
    batch: float
    seqs: float
    hbm_gb: float
    usable: float
    state_bytes: float
    recompute: bool | None
    measured: bool
    fp8: bool
    intra_bw: float
    node_bw: float
    nic_bw: float
    vstage: float
    host_s: float
    moe: bool
    #: Bytes per gradient element synchronised (2 in mixed precision, 4 in FP32/TF32).
    grad_bytes: float
    expert_params: float
    dense_params: float
    top_k: float
    a2a_bytes: float
    a2a_overlap: float
    max_ep: int
    #: The largest tensor-parallel degree (a power of two): within a node, or a TPU pod's 16.
    tp_max: int
    overlap: float
    compute0: float

    @property
    def most(self) -> float:
        """The largest compute a step can have (with recompute): what could hide the most
        traffic."""
        return self.compute0 * _RECOMPUTE_FACTOR

    def memory(self, *, tp: Any, pp: Any, cp: Any, dp: Any, ep: Any) -> MemoryGrid:
        """Per-GPU memory of layouts (``trainbill.memory``), elementwise over arrays of them."""
        # Activations are linear in seq · bytes (flash attention: no seq² term), so FP32's
        # 4-byte activations are charged as twice the sequence at the BF16 rate.
        act_scale = round(self.grad_bytes / _BYTES_PER_BF16)
        return memory_grid(
            params=self.params,
            layers=self.layers,
            d_model=self.d_model,
            seq_len=self.seq_len // cp * act_scale,
            hbm_gb=self.hbm_gb,
            usable_fraction=self.usable,
            state_bytes_per_param=self.state_bytes,
            tp=tp,
            pp=pp,
            dp=np.maximum(1, np.round(dp)),
            recompute=self.recompute,
            expert_params=self.expert_params,
            ep=ep,
        )


@record
class _Run:
    """Everything computed for one question: what the explanation lines are rendered from."""

    q: _Query
    work: _Work
    #: The modelled kernel efficiency (named even when a measured MFU replaces it).
    modelled: _Kernel
    #: The kernel efficiency used: the modelled one, or the measured MFU.
    kernel: _Kernel
    space: _Space
    layout: Layout
    straggler: float

    @property
    def steps(self) -> float:
        """Optimizer steps of the run: tokens over the global batch."""
        return _steps(self.work, self.space.batch)

    @property
    def modelled_hours(self) -> float:
        """Hours of pure training the model gives (before any stated hours replace them)."""
        return _modelled_hours(self.work, self.space.batch, self.layout)

    @property
    def compute_hours(self) -> float:
        """The hours the estimate reports: the plan's stated hours, else the modelled ones."""
        return _compute_hours(self.q, self.work, self.space.batch, self.layout)


def _steps(w: _Work, batch: float) -> float:
    """Optimizer steps of the run: tokens over the global batch (``_Space.batch``)."""
    return w.tokens / batch


def _modelled_hours(w: _Work, batch: float, lay: Layout) -> float:
    """Hours of pure training the model gives (before any stated hours replace them)."""
    return lay.busy_s * _steps(w, batch) / _SECONDS_PER_HOUR


def _compute_hours(q: _Query, w: _Work, batch: float, lay: Layout) -> float:
    """The hours an estimate reports: the plan's stated hours, else the modelled ones (a
    function, not only ``_Run``'s property: an answer without its explanation builds no run)."""
    return q.hours if q.hours is not None else _modelled_hours(w, batch, lay)


def _search_space(q: _Query, w: _Work, k: _Kernel) -> _Space:
    """The layout search's fixed inputs, read from the catalog and the plan once.

    Elementwise over a node sweep's arrays: ``q``'s node count and batch, and the work's and
    kernel's numbers, may be arrays of shape (N, 1) (``_swept_space``), and so are then the
    fields that follow them; the kernel's FP8 choice must be one value."""
    catalog, instance, gpus, gpn, fp = q.catalog, q.instance, q.gpus, q.gpn, q.fp
    net_eff = float(catalog.value("time.network_efficiency"))
    batch = most(q.global_batch_tokens, float(q.seq_len))
    node_bw = (
        instance.network_gbps / 8.0 * 1e9 * net_eff
    )  # all NICs of one node (one chip for TPUs)
    moe = w.sparse and gpus > 1
    # The parameters a token does not use are all expert weights; the routed experts it does use
    # are counted with the replicated part (an overestimate of it by at most the active experts).
    expert_params = where(moe, w.params - w.n_active, 0.0)
    a2a_key = "time.moe_all_to_all_bytes_fp8" if k.fp8 else "time.moe_all_to_all_bytes_bf16"
    # Tensor parallel inside one node only (its all-reduces need NVLink); TPU-style pods' chips
    # share one ICI mesh, so there TP spans chips.
    tp_max = _pow2_floor(least(16, gpus) if instance.billing == "chip" else least(gpn, gpus))
    measured = q.measured_mfu is not None
    return _Space(
        gpus=gpus,
        gpn=gpn,
        params=w.params,
        layers=w.layers,
        d_model=w.d_model,
        seq_len=q.seq_len,
        batch=batch,
        seqs=batch / q.seq_len,
        hbm_gb=q.accelerator.hbm_gb,
        usable=float(catalog.value("time.hbm_usable_fraction")),
        state_bytes=float(catalog.value("time.model_state_bytes_per_param")),
        recompute=q.recompute,
        measured=measured,
        fp8=k.fp8,
        intra_bw=q.accelerator.intra_node_gbytes_per_s * 1e9 * net_eff,
        node_bw=node_bw,
        # one GPU's own NIC: personalised all-to-all traffic cannot share NICs
        nic_bw=node_bw / gpn,
        vstage=float(catalog.value("time.layers_per_virtual_stage")),
        host_s=0.0 if measured else fp.step_overhead_s,
        moe=moe,
        grad_bytes=_activation_bytes(q.precision),
        expert_params=expert_params,
        dense_params=w.params - expert_params,
        top_k=float(catalog.value("time.moe_top_k")),
        a2a_bytes=float(catalog.value(a2a_key)),
        a2a_overlap=float(catalog.value("time.moe_all_to_all_overlap")),
        max_ep=where(moe, int(catalog.value("time.moe_max_expert_parallel")), 1)
        if np.any(moe)
        else 1,
        tp_max=tp_max,
        overlap=fp.overlap,
        # before any recompute; a measured MFU (trainbill profile) counts causal attention
        # in full, as FlopCounterMode does, so its seconds per FLOP go with the full count
        compute0=(w.flops_per_token if measured else w.kernel_flops_per_token)
        * batch
        / gpus
        * k.sec_per_flop,
    )


def _moe_costs(s: _Space, *, tp: Any, pp: Any, ep: Any, shards: Any, tok_per_gpu: Any) -> Any:
    """(expert-gradient sync seconds for one model-volume, all-to-all seconds) of each EP degree
    (elementwise; both 0 for a dense model and ep = 1)."""
    if not np.any(s.moe):  # no expert weights and ep = 1 only: both exactly 0, not computed
        return 0.0, 0.0
    # The ep GPUs of an expert group hold different experts: a node can pre-reduce
    # an expert's gradients only over its GPUs holding that expert (gpn / (tp · ep)).
    ep_bw = _dp_bandwidth(
        gpus=s.gpus, gpn=s.gpn, tp=tp * ep, intra_bw=s.intra_bw, node_bw=s.node_bw
    )
    expert_sync = s.grad_bytes * s.expert_params / ep * _ring(shards / ep) / (tp * pp) / ep_bw
    # Routed copies of each token that leave the GPU, per MoE layer on this stage;
    # tensor-parallel ranks each dispatch their sequence-parallel share.
    out_bytes = s.a2a_bytes * s.d_model * s.top_k * (s.layers / pp) * tok_per_gpu / tp
    per_node = np.where(s.gpus > s.gpn, np.maximum(1, s.gpn // tp), ep)  # EP ranks one node holds
    local = (np.minimum(ep, per_node) - 1) / ep
    remote = np.maximum(0, ep - per_node) / ep
    a2a = np.maximum(out_bytes * local / s.intra_bw, out_bytes * remote / s.nic_bw)
    return expert_sync, np.where(ep > 1, a2a, 0.0)


def _swept_space(q: _Query, w: _Work, k: _Kernel) -> _Space:
    """``_search_space`` of a node sweep's question, built once over its arrays: ``q``'s node
    count, batch (and tokens and hours) and the work's numbers that follow them are arrays of
    shape (N, 1) (``estimate.NODE_KEYWORDS``: only they differ between a sweep's node counts);
    each field of the result that then agrees at every node count is a plain value again (the
    search's bounds read them as numbers)."""
    s = _search_space(q, w, k)
    plain: dict[str, Any] = {}
    for f in dataclasses.fields(_Space):
        v = getattr(s, f.name)
        if isinstance(v, np.ndarray):
            flat = v.reshape(-1)
            plain[f.name] = flat[0].item() if (flat == flat[0]).all() else v.reshape(-1, 1)
    return dataclasses.replace(s, **plain) if plain else s


def _keys(s: _Space) -> tuple[Any, Any, Any, Any]:
    """Every (tp, pp, cp, ep) any node count of ``s`` may try, as four (1, C) arrays in
    lexicographic order (the order ties go by)."""
    most = int(np.max(s.gpus))
    return _key_grid(
        int(np.max(s.tp_max)),
        min(s.layers, most),
        max(1, min(s.seq_len // _CP_MIN_SEQ, most)),
        int(np.max(s.max_ep)),
    )


@functools.lru_cache(maxsize=256)
def _key_grid(tp: int, pp: int, cp: int, ep: int) -> tuple[Any, Any, Any, Any]:
    """The powers of two up to each bound, crossed (remembered: a few bounds recur; the arrays
    are read, never written)."""
    product = itertools.product(_pow2_upto(tp), _pow2_upto(pp), _pow2_upto(cp), _pow2_upto(ep))
    grid = np.array(list(product), dtype=np.int64).T
    rows = tuple(row.reshape(1, -1) for row in grid)
    for row in rows:
        row.flags.writeable = False
    return rows[0], rows[1], rows[2], rows[3]


@record
class _LayoutGrid:
    """Every candidate layout of every node count (axis 0) evaluated: its exact step, memory,
    and whether it is a candidate at all; ``pick`` the chosen column per node count."""

    s: _Space
    keys: tuple[Any, Any, Any, Any]
    dp: Any
    #: Valid but for the batch: too few sequences to split (one per (tp, pp, cp), at ep = 1).
    too_small: Any
    mem: MemoryGrid
    parts: dict[str, Any]
    found: Any
    pick: Any

    def batches(self) -> list[float]:
        """Each node count's global batch in tokens (``_Space.batch``), as plain floats."""
        n = len(np.asarray(self.found))
        batch: Any = self.s.batch  # (an (N, 1) array over a sweep's node counts)
        if isinstance(batch, np.ndarray):
            values: list[float] = batch.reshape(-1).tolist()
            return values
        return [float(batch)] * n

    def layout(self, n: int) -> Layout | None:
        """Node count ``n``'s chosen layout, or None when no layout fits."""
        return self.layouts([n])[0]

    def layouts(self, rows: Sequence[int]) -> list[Layout | None]:
        """The chosen layouts of node counts ``rows`` (None where no layout fits): ``chosen``
        read out row by row (the scalar search's one row, or a caller that wants records)."""
        lay = self.chosen(rows)
        found = np.asarray(self.found)[np.asarray(rows, dtype=np.intp)].tolist()
        mem = lay.memory
        columns = {
            f.name: np.broadcast_to(getattr(lay, f.name), (len(found),)).tolist()
            for f in dataclasses.fields(Layout)
            if f.name != "memory"
        }
        memories = {
            f.name: np.broadcast_to(getattr(mem, f.name), (len(found),)).tolist()
            for f in dataclasses.fields(MemoryEstimate)
        }
        out: list[Layout | None] = []
        for j, ok in enumerate(found):
            if not ok:
                out.append(None)
                continue
            memory = MemoryEstimate(**{k: v[j] for k, v in memories.items()})
            out.append(Layout(memory=memory, **{k: v[j] for k, v in columns.items()}))
        return out

    def chosen(self, rows: Sequence[int] | np.ndarray) -> Layout:
        """The chosen layouts of node counts ``rows`` as one ``Layout`` whose every figure
        (and its memory's) is an array over them, in order (seconds and dp as float64, the
        degrees as int64), read from the grid in one indexing per figure: a node sweep keeps
        its answer as arrays, no record per node count. A row where no layout fits reads its
        first candidate's figures (meaningless: ``found`` says which rows to keep)."""
        rows_a = np.asarray(rows, dtype=np.intp)
        cols = np.asarray(self.pick)[rows_a]

        def at(x: Any) -> Any:
            # an array is (1 or N, 1 or C): a node count's or a candidate's axis of 1 broadcasts
            if np.ndim(x) == 0:
                return np.full(rows_a.shape, float(x))
            r = rows_a if x.shape[0] > 1 else 0
            c = cols if x.shape[1] > 1 else 0
            return np.broadcast_to(x[r, c], rows_a.shape).astype(np.float64)

        tp, pp, cp, ep = (k[0, cols] for k in self.keys)
        p = self.parts
        return Layout(
            tp=tp, pp=pp, cp=cp, dp=at(self.dp), memory=self.mem.chosen(rows_a, cols),
            compute_s=at(p["compute"]), recompute_factor=at(p["recompute"]),
            host_s=at(self.s.host_s), bubble_s=at(p["bubble"]), tp_s=at(p["tp"]),
            dp_sync_s=at(p["sync"]), dp_exposed_s=at(p["dp_exposed"]),
            a2a_exposed_s=at(p["a2a_exposed"]), ep=ep, a2a_s=at(p["a2a"]),
        )  # fmt: skip

    def too_small_at(self, n: int) -> list[tuple[int, int, int, float]]:
        """Node count ``n``'s layouts that fail only for the batch: (tp, pp, cp, dp)."""
        return self.failures([n]).too_small_at(0)

    def failures(self, rows: Sequence[int]) -> _Failures:
        """What the error of node counts ``rows`` is worded from (``too_small_at``), cut out
        of the grid: a node sweep keeps it beside its answer, not the whole grid."""
        shape = self.found.shape + self.keys[0].shape[1:]
        at = np.asarray(rows, dtype=np.intp)
        small = np.broadcast_to(self.too_small, shape)[at]
        dp = np.broadcast_to(self.dp, shape)[at]
        return _Failures(keys=self.keys, too_small=small, dp=dp)


@record
class _Failures:
    """The layouts of some node counts that fail only for the batch (``_LayoutGrid.failures``):
    ``too_small`` and ``dp`` of shape (rows, candidates)."""

    keys: tuple[Any, Any, Any, Any]
    too_small: Any
    dp: Any

    def too_small_at(self, j: int) -> list[tuple[int, int, int, float]]:
        """Row ``j``'s layouts that fail only for the batch: (tp, pp, cp, dp)."""
        tp, pp, cp, _ = (k[0] for k in self.keys)
        dp = self.dp[j]
        return [
            (int(tp[c]), int(pp[c]), int(cp[c]), float(dp[c]))
            for c in np.flatnonzero(self.too_small[j])
        ]


def _valid(s: _Space, tp: Any, pp: Any, cp: Any, ep: Any) -> tuple[Any, Any, Any]:
    """(dp, candidates, too small for the batch) per node count and layout: the bounds of
    each node count (tensor parallel within the node, pp ≤ layers, cp only past 8192 tokens,
    ep within the data-parallel ranks) and the batch rule (one sequence per data-parallel
    rank, and pp per pipeline)."""
    ok = (tp <= s.tp_max) & (pp <= np.minimum(s.layers, s.gpus // tp))
    ok &= cp <= np.maximum(1, np.minimum(s.seq_len // _CP_MIN_SEQ, s.gpus // (tp * pp)))
    dp = s.gpus / (tp * pp * cp)
    small = s.seqs < dp * pp - 1e-9
    ep_ok = ep <= np.minimum(s.max_ep, np.floor(dp))
    return dp, ok & ep_ok & ~small, ok & small & (ep == 1)


def _layout_grid(s: _Space, n: int = 1) -> _LayoutGrid:
    """The search itself, over every candidate of every node count at once (``n`` of them:
    axis 0 of ``s``'s arrays, or one question asked ``n`` times).

    Each candidate's step is exact: its memory check decides recompute (× 4/3, not with a
    measured MFU) and the sync volume (2 model-volumes when the unsharded weights fit beside
    the activations, else 3 under ZeRO-3). Per node count, of the candidates that fit (without
    optimizer offload if any does) the shortest step wins, ties within 1e-9 relative going to
    the smaller (tp, pp, cp, ep).
    """
    tp, pp, cp, ep = keys = _keys(s)
    with np.errstate(divide="ignore", invalid="ignore"):
        dp, cands, too_small = _valid(s, tp, pp, cp, ep)
        chunks = np.maximum(1.0, s.layers / (pp * s.vstage))  # interleaved 1F1B: virtual stages
        bubble_share = (pp - 1) / (s.seqs / dp * chunks)  # of compute
        tok_per_gpu = s.batch / dp / cp
        tp_s = np.where(
            tp > 1,
            16.0 * (s.layers / pp) * s.d_model * (tp - 1) / tp * tok_per_gpu / s.intra_bw,
            0.0,
        )
        shards = dp * cp  # context-parallel ranks hold the same weights: they sync gradients too
        dp_bw = _dp_bandwidth(gpus=s.gpus, gpn=s.gpn, tp=tp, intra_bw=s.intra_bw, node_bw=s.node_bw)
        dense_sync = s.grad_bytes * s.dense_params * _ring(shards) / (tp * pp) / dp_bw  # × volume
        expert_sync, a2a = _moe_costs(
            s, tp=tp, pp=pp, ep=ep, shards=shards, tok_per_gpu=tok_per_gpu
        )
        sync1 = dense_sync + expert_sync
        mem = s.memory(tp=tp, pp=pp, cp=cp, dp=dp, ep=ep)
        recompute = np.where(mem.recompute & (not s.measured), _RECOMPUTE_FACTOR, 1.0)
        compute = s.compute0 * recompute
        unsharded = 4.0 * (s.dense_params + s.expert_params / ep) / (
            tp * pp
        ) + s.state_bytes * s.params / (tp * pp * dp)
        vol = np.where(unsharded + mem.activations_gb * 1e9 <= mem.usable_gb * 1e9, 2.0, 3.0)
        sync = vol * sync1
        parts = {
            "compute": compute, "recompute": recompute, "bubble": bubble_share * compute,
            "tp": tp_s, "sync": sync, "a2a": a2a,
            "dp_exposed": np.maximum(0.0, sync - s.overlap * compute),
            "a2a_exposed": np.maximum(0.0, a2a - s.a2a_overlap * compute),
        }  # fmt: skip
        step = (
            compute + s.host_s + parts["bubble"] + tp_s + parts["dp_exposed"] + parts["a2a_exposed"]
        )
        ok = cands & mem.fits
        unloaded = ok & ~mem.offload
        pool = np.where(unloaded.any(axis=1, keepdims=True), unloaded, ok)
        steps = np.where(pool, step, np.inf)
        best = steps.min(axis=1, keepdims=True)
        near = pool & (np.abs(steps - best) <= best * 1e-9)
    return _LayoutGrid(
        s=s, keys=keys, dp=dp, too_small=too_small, mem=mem, parts=parts,
        found=np.broadcast_to(pool.any(axis=1), (n,)),
        pick=np.broadcast_to(near.argmax(axis=1), (n,)),
    )  # fmt: skip


def _no_layout_error(
    s: _Space, too_small: list[tuple[int, int, int, float]], accelerator: Accelerator
) -> SpecError | MemoryFitError:
    """Why no layout works: the batch is too small to split (and the smallest that works), or
    the model does not fit (and how many GPUs would hold it)."""
    fitting = [
        dp * pp * s.seq_len
        for tp, pp, cp, dp in too_small
        if s.memory(
            tp=tp, pp=pp, cp=cp, dp=dp, ep=_pow2_floor(min(s.max_ep, max(1, int(dp))))
        ).fits[()]
    ]
    if fitting:
        smallest = math.ceil(min(fitting))
        msg = (
            f"a global batch of {s.batch:,.0f} tokens is {s.seqs:,.4g} sequences of {s.seq_len}: "
            f"too few to split over {s.gpus} GPUs (every data-parallel rank needs a sequence and "
            "a pipeline of pp stages pp micro-batches); the smallest batch that works is "
            f"{smallest:,} tokens"
        )
        return SpecError(msg, field="model.global_batch_tokens")
    fewest = min_gpus_to_fit(
        params=s.params, layers=s.layers, d_model=s.d_model, seq_len=s.seq_len, hbm_gb=s.hbm_gb,
        usable_fraction=s.usable, state_bytes_per_param=s.state_bytes, gpus_per_node=s.tp_max,
    )  # fmt: skip
    hint = (
        f"at least {fewest} {accelerator.id} GPUs"
        if fewest
        else f"an accelerator with more than {accelerator.hbm_gb:g} GB"
    )
    msg = (
        f"a {s.params:.3g}-parameter model at seq_len {s.seq_len} does not fit on {s.gpus} × "
        f"{accelerator.id} ({accelerator.hbm_gb:g} GB HBM) even with full sharding, recompute and "
        f"optimizer offload; use {hint}"
    )
    return MemoryFitError(msg)


def _choose_layout(s: _Space, accelerator: Accelerator) -> Layout:
    """The fastest layout that fits, or the error that says why none does: the array search
    over this one node count."""
    grid = _layout_grid(s)
    lay = grid.layout(0)
    if lay is None:
        raise _no_layout_error(s, grid.too_small_at(0), accelerator)
    return lay
