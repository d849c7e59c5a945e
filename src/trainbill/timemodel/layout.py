"""The layout search: tensor × pipeline × context × expert × data parallel, the fastest that
fits in memory, and the error that says why none does."""

from __future__ import annotations

import math

from trainbill._record import record
from trainbill.catalog import Accelerator
from trainbill.errors import SpecError
from trainbill.memory import MemoryEstimate, MemoryFitError, memory_per_gpu, min_gpus_to_fit
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


def _dp_bandwidth(*, gpus: int, gpn: int, tp: int, intra_bw: float, node_bw: float) -> float:
    """Effective bytes/s per GPU for a data-parallel all-reduce/all-gather/reduce-scatter.

    Inside one node the collective runs over NVLink. Across nodes NCCL runs it hierarchically
    (or as one ring per NIC): the node's ranks of a DP group first reduce over NVLink, then each
    moves only its 1/k share over its own NIC, so the group sees k NICs' worth of bandwidth,
    k = GPUs of the group per node = GPUs per node / tp. With tp = 1 that is the whole node's
    bandwidth (what nccl-tests report as bus bandwidth on multi-node H100/A100 clusters), with
    tp = GPUs per node one NIC. Never faster than NVLink.
    """
    if gpus <= gpn:
        return intra_bw
    share = max(1, gpn // tp)
    return min(intra_bw, node_bw * share / gpn)


def _ring(n: float) -> float:
    """Share of the data a ring/hierarchical collective over n ranks moves per rank: (n − 1) / n."""
    return (n - 1.0) / n if n > 1.0 else 0.0


def _pow2_upto(limit: int) -> list[int]:
    out, p = [], 1
    while p <= limit:
        out.append(p)
        p *= 2
    return out


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
    tps: list[int]
    overlap: float
    compute0: float

    @property
    def most(self) -> float:
        """The largest compute a step can have (with recompute): what could hide the most
        traffic."""
        return self.compute0 * _RECOMPUTE_FACTOR

    def memory(self, *, tp: int, pp: int, cp: int, dp: float, ep: int) -> MemoryEstimate:
        """Per-GPU memory of one layout (``trainbill.memory``)."""
        # Activations are linear in seq · bytes (flash attention: no seq² term), so FP32's
        # 4-byte activations are charged as twice the sequence at the BF16 rate.
        act_scale = round(self.grad_bytes / _BYTES_PER_BF16)
        return memory_per_gpu(
            params=self.params,
            layers=self.layers,
            d_model=self.d_model,
            seq_len=self.seq_len // cp * act_scale,
            hbm_gb=self.hbm_gb,
            usable_fraction=self.usable,
            state_bytes_per_param=self.state_bytes,
            tp=tp,
            pp=pp,
            dp=max(1, round(dp)),
            recompute=self.recompute,
            expert_params=self.expert_params,
            ep=ep,
        )


#: One candidate layout before its memory check: (lower bound on the step, (tp, pp, cp, ep),
#: dp, bubble share of compute, TP seconds, one model-volume of DP sync seconds, all-to-all
#: seconds).
_Cand = tuple[float, tuple[int, int, int, int], float, float, float, float, float]


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
        return self.work.tokens / self.space.batch

    @property
    def modelled_hours(self) -> float:
        """Hours of pure training the model gives (before any stated hours replace them)."""
        return self.layout.busy_s * self.steps / _SECONDS_PER_HOUR

    @property
    def compute_hours(self) -> float:
        """The hours the estimate reports: the plan's stated hours, else the modelled ones."""
        return self.q.hours if self.q.hours is not None else self.modelled_hours


def _search_space(q: _Query, w: _Work, k: _Kernel) -> _Space:
    """The layout search's fixed inputs, read from the catalog and the plan once."""
    catalog, instance, gpus, gpn, fp = q.catalog, q.instance, q.gpus, q.gpn, q.fp
    net_eff = float(catalog.value("time.network_efficiency"))
    batch = max(q.global_batch_tokens, float(q.seq_len))
    node_bw = (
        instance.network_gbps / 8.0 * 1e9 * net_eff
    )  # all NICs of one node (one chip for TPUs)
    moe = w.sparse and gpus > 1
    # The parameters a token does not use are all expert weights; the routed experts it does use
    # are counted with the replicated part (an overestimate of it by at most the active experts).
    expert_params = w.params - w.n_active if moe else 0.0
    a2a_key = "time.moe_all_to_all_bytes_fp8" if k.fp8 else "time.moe_all_to_all_bytes_bf16"
    # Tensor parallel inside one node only (its all-reduces need NVLink); TPU-style pods' chips
    # share one ICI mesh, so there TP spans chips.
    tps = _pow2_upto(min(16, gpus)) if instance.billing == "chip" else _pow2_upto(min(gpn, gpus))
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
        max_ep=int(catalog.value("time.moe_max_expert_parallel")) if moe else 1,
        tps=tps,
        overlap=fp.overlap,
        # before any recompute; a measured MFU (trainbill profile) counts causal attention
        # in full, as FlopCounterMode does, so its seconds per FLOP go with the full count
        compute0=(w.flops_per_token if measured else w.kernel_flops_per_token)
        * batch
        / gpus
        * k.sec_per_flop,
    )


def _moe_costs(
    s: _Space, *, tp: int, pp: int, ep: int, shards: float, tok_per_gpu: float
) -> tuple[float, float]:
    """(expert-gradient sync seconds for one model-volume, all-to-all seconds) of one EP degree."""
    expert_sync = 0.0
    if s.expert_params:
        # The ep GPUs of an expert group hold different experts: a node can pre-reduce
        # an expert's gradients only over its GPUs holding that expert (gpn / (tp · ep)).
        ep_bw = _dp_bandwidth(
            gpus=s.gpus, gpn=s.gpn, tp=tp * ep, intra_bw=s.intra_bw, node_bw=s.node_bw
        )
        expert_sync = s.grad_bytes * s.expert_params / ep * _ring(shards / ep) / (tp * pp) / ep_bw
    a2a = 0.0
    if ep > 1:
        # Routed copies of each token that leave the GPU, per MoE layer on this stage;
        # tensor-parallel ranks each dispatch their sequence-parallel share.
        out_bytes = s.a2a_bytes * s.d_model * s.top_k * (s.layers / pp) * tok_per_gpu / tp
        per_node = max(1, s.gpn // tp) if s.gpus > s.gpn else ep  # EP ranks one node holds
        local = (min(ep, per_node) - 1) / ep
        remote = max(0, ep - per_node) / ep
        a2a = max(out_bytes * local / s.intra_bw, out_bytes * remote / s.nic_bw)
    return expert_sync, a2a


def _candidates_at(s: _Space, tp: int, pp: int, cp: int) -> list[_Cand]:
    """Every expert-parallel degree of one (tp, pp, cp), each with its step's lower bound."""
    dp = s.gpus / (tp * pp * cp)
    chunks = max(1.0, s.layers / (pp * s.vstage))  # interleaved 1F1B: virtual stages per GPU
    bubble_share = (pp - 1) / (s.seqs / dp * chunks)  # of compute
    tok_per_gpu = s.batch / dp / cp
    tp_s = (
        16.0 * (s.layers / pp) * s.d_model * (tp - 1) / tp * tok_per_gpu / s.intra_bw
        if tp > 1
        else 0.0
    )
    shards = dp * cp  # context-parallel ranks hold the same weights: they sync gradients too
    dp_bw = _dp_bandwidth(gpus=s.gpus, gpn=s.gpn, tp=tp, intra_bw=s.intra_bw, node_bw=s.node_bw)
    dense_sync = s.grad_bytes * s.dense_params * _ring(shards) / (tp * pp) / dp_bw  # × volume
    out: list[_Cand] = []
    for ep in _pow2_upto(min(s.max_ep, int(dp))):
        expert_sync, a2a = _moe_costs(
            s, tp=tp, pp=pp, ep=ep, shards=shards, tok_per_gpu=tok_per_gpu
        )
        sync1 = dense_sync + expert_sync
        bound = (
            s.compute0 * (1.0 + bubble_share)
            + s.host_s
            + tp_s
            + max(0.0, 2.0 * sync1 - s.overlap * s.most)
            + max(0.0, a2a - s.a2a_overlap * s.most)
        )
        out.append((bound, (tp, pp, cp, ep), dp, bubble_share, tp_s, sync1, a2a))
    return out


def _candidates(s: _Space) -> tuple[list[_Cand], list[tuple[int, int, int, float]]]:
    """Layouts that split the batch (sorted by lower bound), and those valid but for the batch.

    Every candidate's step time is known up to the memory check, which decides recompute
    (× 4/3) and the sync volume (2 or 3 model-bytes). Its lower bound (no recompute in the step,
    the most compute could hide, volume 2) orders the memory checks best-first: once the next
    bound exceeds the best exact step nothing after it can win, so the choice is the exhaustive
    search's (ties to the smaller tp, pp, cp, ep) at a fraction of the memory checks.
    """
    too_small: list[tuple[int, int, int, float]] = []
    cands: list[_Cand] = []
    for tp in s.tps:
        for pp in _pow2_upto(min(s.layers, s.gpus // tp)):
            for cp in _pow2_upto(max(1, min(s.seq_len // _CP_MIN_SEQ, s.gpus // (tp * pp)))):
                dp = s.gpus / (tp * pp * cp)
                if (
                    s.seqs < dp * pp - 1e-9
                ):  # one sequence per data-parallel rank, and pp per pipeline
                    too_small.append((tp, pp, cp, dp))
                    continue
                cands += _candidates_at(s, tp, pp, cp)
    cands.sort(key=lambda c: (c[0], c[1]))
    return cands, too_small


def _exact_layout(s: _Space, cand: _Cand, mem: MemoryEstimate) -> Layout:
    """One candidate's exact step, now that its memory (recompute, sync volume) is known."""
    _, (tp, pp, cp, ep), dp, bubble_share, tp_s, sync1, a2a = cand
    recompute_cost = _RECOMPUTE_FACTOR if mem.recompute and not s.measured else 1.0
    compute = s.compute0 * recompute_cost
    unsharded = 4.0 * (s.dense_params + s.expert_params / ep) / (
        tp * pp
    ) + s.state_bytes * s.params / (tp * pp * dp)
    vol = 2.0 if unsharded + mem.activations_gb * 1e9 <= mem.usable_gb * 1e9 else 3.0
    sync = vol * sync1
    return Layout(
        tp=tp,
        pp=pp,
        cp=cp,
        dp=dp,
        memory=mem,
        compute_s=compute,
        recompute_factor=recompute_cost,
        host_s=s.host_s,
        bubble_s=bubble_share * compute,
        tp_s=tp_s,
        dp_sync_s=sync,
        dp_exposed_s=max(0.0, sync - s.overlap * compute),
        a2a_exposed_s=max(0.0, a2a - s.a2a_overlap * compute),
        ep=ep,
        a2a_s=a2a,
    )


def _pick_layout(s: _Space, cands: list[_Cand]) -> Layout | None:
    """The shortest exact step among candidates that fit in memory (no offload if avoidable).

    Ties go to the smaller (tp, pp, cp, ep); the scan stops once a lower bound exceeds the best.
    """
    best: Layout | None = None
    best_step, best_key = math.inf, (0, 0, 0, 0)
    for cand in cands:
        settled = best is not None and not best.memory.offload
        if settled and cand[0] > best_step * (1.0 + 1e-9):
            break
        tp, pp, cp, ep = key = cand[1]
        mem = s.memory(tp=tp, pp=pp, cp=cp, dp=cand[2], ep=ep)
        if not mem.fits or (mem.offload and settled):
            continue
        lay = _exact_layout(s, cand, mem)
        step = (
            lay.compute_s
            + lay.host_s
            + lay.bubble_s
            + lay.tp_s
            + lay.dp_exposed_s
            + lay.a2a_exposed_s
        )
        tie = abs(step - best_step) <= best_step * 1e-9 and key < best_key
        unload = best is not None and best.memory.offload and not mem.offload
        if best is None or unload or step < best_step * (1.0 - 1e-9) or tie:
            best, best_step, best_key = lay, step, key
    return best


def _no_layout_error(
    s: _Space, too_small: list[tuple[int, int, int, float]], accelerator: Accelerator
) -> Exception:
    """Why no layout works: the batch is too small to split (and the smallest that works), or
    the model does not fit (and how many GPUs would hold it)."""
    fitting = [
        dp * pp * s.seq_len
        for tp, pp, cp, dp in too_small
        if s.memory(
            tp=tp, pp=pp, cp=cp, dp=dp, ep=_pow2_upto(min(s.max_ep, max(1, int(dp))))[-1]
        ).fits
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
        usable_fraction=s.usable, state_bytes_per_param=s.state_bytes, gpus_per_node=max(s.tps),
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
    """The fastest layout that fits, or the error that says why none does."""
    cands, too_small = _candidates(s)
    lay = _pick_layout(s, cands)
    if lay is None:
        raise _no_layout_error(s, too_small, accelerator)
    return lay
