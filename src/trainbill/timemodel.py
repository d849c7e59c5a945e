"""Time model: from model size, tokens and cluster to compute hours and synchronization stall.

Why a model and not a constant MFU: the bill is hours × price, and quotes go wrong in the hours.
Achieved throughput depends on the accelerator and precision, on the model's width, on how the
model is split over GPUs (tensor, pipeline, data parallel), on how much traffic crosses the
inter-node network per step and how much of it hides behind compute, and on the slowest GPU in
every step. Each factor is reported in ``TimeEstimate.factors`` so ``--explain`` can show it.

Formulas (constants come from the catalog: ``[time]`` assumptions and the six fitted global
parameters ``time.fit.*`` in ``time_model_fit.toml``, written by ``tools/fit_time_model.py``,
which also reports leave-one-out cross-validated errors):

* model FLOPs = 6 · N_active · D (Kaplan et al. 2020, arXiv 2001.08361; MoE uses active
  parameters) + attention 12 · L · d_model · seq_len · D (Narayanan et al. 2021, arXiv 2104.04473
  Eq. 3 without recompute; PaLM arXiv 2204.02311 App. B). Without layers/d_model the shape is
  estimated from N = 12 · L · d² with d / L = ``time.aspect_ratio`` (GPT-3/Llama are 100–160).
* kernel time per FLOP = (g + m) / (peak_bf16 · e_max · maturity) where g = 1 for BF16 and
  1 / (η_fp8 · peak_fp8 / peak_bf16) for FP8 (only the matmuls speed up), and the memory-bound
  share m = k_mem · B / d_model with B = peak BF16 FLOP/s ÷ HBM bytes/s, the datasheet machine
  balance (H100 989e12 / 3.35e12 = 295 FLOP/byte, A100-80GB 153): element-wise work (norms,
  activations, residuals, optimizer) moves bytes ∝ width per token per layer while matmul
  FLOPs grow ∝ width², so narrow models on compute-rich chips lose the most. Full activation
  recompute (when memory requires it) adds one forward pass: × 4/3.
* software maturity = 1 − immaturity · exp(−age / τ), age = the run's date (the plan's
  ``run.date``, else ``prices.as_of``, else today) minus the accelerator's ``launched`` date in the catalog, τ =
  ``time.maturity_tau_years``: kernels, compilers and frameworks for a new architecture keep
  improving for years after launch (MosaicML's first H100 runs in 2023 reached 0.72–0.80× their
  A100 MFU; Megatron-Bridge 25.11 gets far more from the same chip), so a run on a young chip
  is slower than the same run later. Only ``immaturity`` is fitted.
* unfused attention (runs before FlashAttention, Dao et al. 2022, arXiv 2205.14135; never a
  plan's default): m += k_attn · L · (d / 128) · seq_len · B / (FLOPs per token), the seq × seq
  scores of every head moved through HBM at k_attn bytes each. Counting Megatron-LM's fp16
  passes per score: forward 13 bytes (QKᵀ writes 2, fused softmax reads 2 and writes 2, dropout
  reads 2, writes 2 and a 1-byte mask, PV reads 2), the same 13 again under activation
  recompute, backward 19 (dP write 2, dropout backward 5, softmax backward 6, the two QKᵀ
  gradient reads 4, the V-gradient read 2): 45 bytes, held at that count
  (``time.unfused_attention_bytes_per_score``) rather than fitted.
* host overhead: a fixed ``step_overhead_s`` per optimizer step (optimizer kernels, gradient
  clipping, the first FSDP gather and last reduce-scatter, data loader and logging) that does
  not shrink with more GPUs; it matters for short steps (small models, small batches).
* layout: tensor parallel tp ∈ {1, GPUs per node}, pipeline pp ∈ {1, 2, 4, …}; the layout that
  fits in memory (``trainbill.memory``) with the shortest step is chosen.
* data-parallel sync per step = v · 2 bytes · N / (tp · pp) · (dp − 1) / dp over the effective
  per-GPU collective bandwidth × ``time.network_efficiency``: NVLink inside one node; across
  nodes NCCL's hierarchical/multi-ring collectives give the group the bandwidth of its
  GPUs-per-node / tp NICs (the whole node's bandwidth at tp = 1, one NIC at tp = 8), capped by
  NVLink. v = 3 under ZeRO-3/FSDP, 2 when unsharded weights fit; exposed = max(0, sync −
  overlap · compute).
* tensor parallel: 16 · (L / pp) · d · (tp − 1) / tp bytes per token over NVLink, not hidden.
* context parallel cp splits sequences longer than 8192 tokens (KV exchange not modelled).
* pipeline bubble (interleaved 1F1B, Narayanan et al. 2021 Sec. 2.2.2) = (pp − 1) / (micro-batches
  · v) with v = L / (pp · ``time.layers_per_virtual_stage``) virtual stages per GPU, one
  sequence per micro-batch.
* MoE all-to-all: 8 · d · top_k bytes per token per layer (dispatch + combine, forward +
  backward, bf16) over each GPU's own NIC share, exposed except the overlapped share.
* straggler stall = cv · sqrt(2 ln G) (expected maximum of G Gaussian step times).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainbill.catalog import Accelerator, Catalog, Instance
from trainbill.memory import MemoryEstimate, MemoryFitError, memory_per_gpu, min_gpus_to_fit

__all__ = [
    "FitParams",
    "Layout",
    "TimeEstimate",
    "estimate_shape",
    "estimate_time",
    "fit_params",
    "training_flops",
]

_SECONDS_PER_HOUR = 3600.0
_BYTES_PER_BF16 = 2.0
_RECOMPUTE_FACTOR = 4.0 / 3.0  # one extra forward pass over fwd (1) + bwd (2)
_CP_MIN_SEQ = 8192  # context parallelism splits sequences longer than this (Llama 3: CP16 at 128K)
_HEAD_DIM = 128  # attention head width of GPT-3 175B, Llama and most large models (heads = d / 128)


@dataclass(frozen=True, slots=True, kw_only=True)
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

    def __post_init__(self) -> None:
        # The factor must stay in (0, 1]: immaturity 1 would divide by zero at launch, above 1
        # give negative hours, below 0 a chip faster than mature; τ <= 0 divides by zero or
        # overflows. The fit searches immaturity within [0, 0.9].
        if not 0.0 <= self.immaturity < 1.0:
            msg = f"immaturity must be in [0, 1) (share of mature efficiency missing at launch), got {self.immaturity!r}"
            raise ValueError(msg)
        if not (math.isfinite(self.maturity_tau_years) and self.maturity_tau_years > 0.0):
            msg = f"maturity_tau_years must be a finite number of years > 0, got {self.maturity_tau_years!r}"
            raise ValueError(msg)

    def maturity(self, age_years: float) -> float:
        """Share of mature kernel efficiency reached ``age_years`` after the chip's launch.

        Kernels, compilers and frameworks for a new architecture keep improving for years
        (MosaicML's first H100 runs in 2023 reached 0.72–0.80× their A100 MFU; NVIDIA's 2025
        Megatron-Bridge reaches far more on the same chip). A run before launch (an overlay
        chip dated in the future) counts as age 0. Always in (0, 1].
        """
        if math.isnan(age_years):
            msg = "software age is NaN: give the years from the accelerator's launch to the run, or None if unknown"
            raise ValueError(msg)
        return 1.0 - self.immaturity * math.exp(-max(age_years, 0.0) / self.maturity_tau_years)


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
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """How the model is split: tensor × pipeline × data parallel, and the step's time budget."""

    tp: int
    pp: int
    cp: int
    dp: float
    memory: MemoryEstimate
    compute_s: float
    #: What recompute multiplied ``compute_s`` by (4/3, or 1 without it or with a measured MFU).
    recompute_factor: float
    host_s: float
    bubble_s: float
    tp_s: float
    dp_sync_s: float
    dp_exposed_s: float
    a2a_exposed_s: float

    @property
    def stall_s(self) -> float:
        """Seconds per step beyond pure compute (bubble, TP, exposed DP and MoE traffic)."""
        return self.bubble_s + self.tp_s + self.dp_exposed_s + self.a2a_exposed_s

    @property
    def busy_s(self) -> float:
        """Seconds per step of training work: kernels plus the fixed per-step host overhead."""
        return self.compute_s + self.host_s

    @property
    def step_s(self) -> float:
        """Seconds per step, excluding stragglers."""
        return self.busy_s + self.stall_s


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
    layout: Layout | None = None
    warnings: tuple[str, ...] = ()

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


def estimate_shape(params: float, aspect_ratio: float) -> tuple[int, int]:
    """(layers, d_model) from N = 12 · L · d² and d = aspect_ratio · L (Kaplan et al. 2020)."""
    d = (params * aspect_ratio / 12.0) ** (1.0 / 3.0)
    layers = max(1, round(d / aspect_ratio))
    return layers, max(64, round(d))


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


def _pow2_upto(limit: int) -> list[int]:
    out, p = [], 1
    while p <= limit:
        out.append(p)
        p *= 2
    return out


def _maturity_note(accelerator: Accelerator, fp: FitParams, age: float | None, maturity: float) -> str:
    """The software-maturity factor in words, for ``--explain``."""
    if age is None:
        return f"{accelerator.id} launch date unknown: software taken as mature (× 1)"
    launched = accelerator.launched.isoformat() if accelerator.launched else "?"
    # Two decimals of age and four digits of immaturity: the printed arithmetic must give the
    # printed factor by hand (one decimal of age was off by up to 0.004 at two years).
    when = (f"{age:.2f} years before the run" if age >= 0 else
            f"{-age:.2f} years after the run date (a run before launch counts as age 0, brand-new software)")
    return (f"{accelerator.id} launched {launched}, {when}: kernels at "
            f"1 − {fp.immaturity:.4g} × exp(−{max(age, 0.0):.2f} / {fp.maturity_tau_years:g}) = {maturity:.3f} "
            f"of mature efficiency (fitted shortfall of new software on a new chip)")  # fmt: skip


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
    recompute: bool | None = None,
    fit: FitParams | None = None,
    measured_mfu: float | None = None,
    fused_attention: bool = True,
    software_age_years: float | None = None,
) -> TimeEstimate:
    """Estimate compute hours and the sync-stall fraction for a cluster.

    When ``hours`` is given it is taken as the wall-clock of pure training and only the stall
    is modelled; otherwise hours are derived from FLOPs and the fitted efficiency model.
    ``recompute`` forces activation recompute on/off (a published config); ``fit`` overrides
    the catalog's fitted parameters (the fit script searches over them). ``measured_mfu``
    (from ``trainbill profile``) replaces the modelled kernel efficiency: a measured step is
    better evidence than the fit, and it already includes any recompute the user runs, so
    the recompute factor is not applied again; layout, communication, bubbles and stragglers
    still come from the model, which is how the measurement extrapolates to the plan's GPUs.
    ``fused_attention=False`` describes software from before FlashAttention (2022), which
    writes the seq × seq attention scores to HBM; plans always assume fused attention, and the
    published runs of that era (Megatron-LM 2021, OPT-175B) use it so the fit can learn from
    them without mistaking old attention kernels for a slow accelerator.
    ``software_age_years`` is the run's date minus the accelerator's launch (``None``: launch
    date unknown, software taken as mature); young chips run below the mature efficiency.

    Raises:
        MemoryFitError: the model cannot fit on this many accelerators, even with offload.
    """
    fp = fit or fit_params(catalog)
    gpn = instance.accelerator_count
    gpus = nodes * gpn
    peak = accelerator.peak_tflops(precision)
    bf16 = accelerator.peak_bf16_tflops
    factors: list[tuple[str, str]] = [
        ("accelerator", (f"{accelerator.name}: dense {precision} peak {peak:g} TFLOP/s, "
         f"{accelerator.hbm_gb:g} GB HBM at {accelerator.hbm_tbps:g} TB/s ({accelerator.source})")),
        ("gpus", (f"{nodes} × {instance.instance} × {gpn} = {gpus} accelerators; "
         f"{instance.network_gbps:g} Gbps per node between nodes, {accelerator.intra_node_gbytes_per_s:g} GB/s inside")),
    ]  # fmt: skip
    warnings: list[str] = []
    fp8 = precision == "fp8" and accelerator.peak_fp8_tflops is not None
    if precision == "fp8" and not fp8:
        factors.append(("precision", f"{accelerator.id} has no FP8 units: BF16 peak used"))
    elif fp8 and accelerator.peak_fp8_tflops is not None and fp.eta_fp8 * accelerator.peak_fp8_tflops <= bf16:
        # FP8 pays scaling and casts (η_fp8 < 1); where its peak is no higher than BF16's
        # (Trainium1: 190 and 190 TFLOP/s) it would be slower, and nobody trains that way.
        fp8 = False
        factors.append(("precision", (f"FP8 on {accelerator.id} is no faster than BF16 (FP8 peak {accelerator.peak_fp8_tflops:g} "
                        f"× η_fp8 {fp.eta_fp8:.2f} ≤ BF16 peak {bf16:g} TFLOP/s): BF16 speed used")))  # fmt: skip
    straggler = straggler_cv * math.sqrt(2.0 * math.log(gpus)) if gpus > 1 else 0.0
    straggler_factor = (
        "stragglers",
        f"slowest of {gpus} GPUs: cv {straggler_cv:g} × sqrt(2 ln {gpus}) = {straggler:.1%} per step",
    )
    n_active = active_params if active_params is not None else params
    if params is None or n_active is None or tokens is None:
        if hours is None:  # pragma: no cover - the plan validator requires hours or a model
            msg = "give either run hours or model params and tokens"
            raise MemoryFitError(msg)
        factors += [("hours", f"{hours:g} h of pure training, as given in the plan"),
                    ("communication", "model size unknown: gradient sync not modelled"), straggler_factor]  # fmt: skip
        return TimeEstimate(
            compute_hours=hours, comm_stall_fraction=0.0, straggler_fraction=straggler, flops=None,
            peak_tflops_per_gpu=peak, base_mfu=None, factors=tuple(factors),
        )  # fmt: skip

    # Shape and FLOPs.
    aspect = float(catalog.value("time.aspect_ratio"))
    if layers is None or d_model is None:
        est_l, est_d = estimate_shape(n_active, aspect)
        layers, d_model = layers or est_l, d_model or est_d
        factors.append(("shape", (f"layers/d_model not given: estimated {layers} × {d_model} from "
                        f"{n_active:.3g} = 12·L·d² with d/L = {aspect:g} ({catalog.assumption('time.aspect_ratio').source})")))  # fmt: skip
    flops = training_flops(active_params=n_active, tokens=tokens, layers=layers, d_model=d_model, seq_len=seq_len)
    attn = 12.0 * layers * d_model * seq_len * tokens
    factors.append(("flops", (f"6 × {n_active:.3g} active params × {tokens:.3g} tokens + attention "
                    f"12 × {layers} × {d_model} × {seq_len} × {tokens:.3g} = {flops:.3g} FLOPs "
                    f"({attn / flops:.1%} attention)")))  # fmt: skip

    # Kernel efficiency.
    flop_per_byte = bf16 * 1e12 / (accelerator.hbm_tbps * 1e12)  # machine balance, FLOP per HBM byte
    m = fp.k_mem * flop_per_byte / d_model
    if not fused_attention:
        heads = d_model / _HEAD_DIM
        m_attn = fp.k_attn * layers * heads * seq_len * flop_per_byte / (flops / tokens)
        factors.append(("attention", (f"unfused attention: k_attn {fp.k_attn:.3g} bytes × {layers} layers × "
                        f"{heads:g} heads × {seq_len} scores per token through HBM = {m_attn:.3f} of matmul time")))  # fmt: skip
        m += m_attn
    g = 1.0 / (fp.eta_fp8 * peak / bf16) if fp8 else 1.0
    maturity = 1.0 if software_age_years is None else fp.maturity(software_age_years)
    sec_per_flop = (g + m) / (bf16 * 1e12 * fp.e_max * maturity)
    kernel_mfu = 1.0 / (sec_per_flop * peak * 1e12)
    if measured_mfu is not None:
        factors.append(("calibration", (f"measured MFU {measured_mfu:.1%} (trainbill profile) replaces the "
                        f"modelled kernel efficiency {kernel_mfu:.1%}")))  # fmt: skip
        kernel_mfu = measured_mfu
        sec_per_flop = 1.0 / (measured_mfu * peak * 1e12)
    if measured_mfu is None:
        factors.append(("maturity", _maturity_note(accelerator, fp, software_age_years, maturity)))
        if software_age_years is not None and software_age_years < 0:
            warnings.append(f"run.date (default prices.as_of) is {-software_age_years:.2f} years before {accelerator.id} launched "
                            f"({accelerator.launched}, catalog accelerators.csv launched): its software is taken as brand-new (maturity {maturity:.3f})")  # fmt: skip
        factors.append(("kernel", (f"e_max {fp.e_max:.3f} × maturity {maturity:.3f} / (matmul {g:.3f} + memory-bound {m:.3f}) on BF16 "
                        f"peak: m = k_mem {fp.k_mem:.3g} × ({bf16:g} TFLOP/s ÷ {accelerator.hbm_tbps:g} TB/s "
                        f"= {flop_per_byte:.0f} FLOP/byte) "
                        f"÷ d_model {d_model} → {kernel_mfu:.1%} of {precision} peak before recompute "
                        f"and communication (fit: {catalog.assumption('time.fit.e_max').source})")))  # fmt: skip
    else:
        # The measured step ran on the user's own software: no modelled ceiling, memory-bound
        # share or software-maturity factor applies (the calibration line names what it replaced).
        factors.append(("kernel", (f"measured {kernel_mfu:.1%} of {precision} peak (trainbill profile) before "
                        f"communication; the software-maturity factor is not applied to a measurement")))  # fmt: skip
    if fp8:
        speedup = (1.0 + m) / (g + m)
        factors.append(("precision", (f"FP8: matmuls at η_fp8 {fp.eta_fp8:.2f} × {peak / bf16:.2f}× BF16 peak, "
                        f"memory-bound work unchanged → {speedup:.2f}× BF16 speed")))  # fmt: skip

    # Layout search.
    usable = float(catalog.value("time.hbm_usable_fraction"))
    state_bytes = float(catalog.value("time.model_state_bytes_per_param"))
    net_eff = float(catalog.value("time.network_efficiency"))
    top_k = float(catalog.value("time.moe_top_k"))
    batch = max(global_batch_tokens, float(seq_len))
    step_flops_total = flops / tokens * batch
    intra_bw = accelerator.intra_node_gbytes_per_s * 1e9 * net_eff
    node_bw = instance.network_gbps / 8.0 * 1e9 * net_eff  # all NICs of one node (one chip for TPUs)
    nic_bw = node_bw / gpn  # one GPU's own NIC: personalised all-to-all traffic cannot share NICs
    vstage = float(catalog.value("time.layers_per_virtual_stage"))
    host_s = 0.0 if measured_mfu is not None else fp.step_overhead_s
    best: Layout | None = None
    tps = sorted({1, gpn}) if gpus >= gpn else [1]
    if instance.billing == "chip":  # TPU-style pods: chips share one ICI mesh, so TP spans chips
        tps = list(_pow2_upto(min(16, gpus)))
    layouts = [
        (tp, pp, cp)
        for tp in tps
        for pp in _pow2_upto(min(layers, gpus // tp))
        for cp in _pow2_upto(max(1, min(seq_len // _CP_MIN_SEQ, gpus // (tp * pp))))
    ]
    for tp, pp, cp in layouts:
        if True:
            dp = gpus / (tp * pp * cp)
            mem = memory_per_gpu(
                params=params, layers=layers, d_model=d_model, seq_len=seq_len // cp, hbm_gb=accelerator.hbm_gb,
                usable_fraction=usable, state_bytes_per_param=state_bytes, tp=tp, pp=pp, dp=max(1, round(dp)),
                recompute=recompute,
            )  # fmt: skip
            if not mem.fits or (mem.offload and best is not None and not best.memory.offload):
                continue
            recompute_cost = _RECOMPUTE_FACTOR if mem.recompute and measured_mfu is None else 1.0
            compute = step_flops_total / gpus * sec_per_flop * recompute_cost
            micro = max(1.0, batch / seq_len / dp)
            chunks = max(1.0, layers / (pp * vstage))  # interleaved 1F1B: virtual stages per GPU
            bubble = (pp - 1) / (micro * chunks) * compute
            dp_bw = _dp_bandwidth(gpus=gpus, gpn=gpn, tp=tp, intra_bw=intra_bw, node_bw=node_bw)
            tok_per_gpu = batch / dp / cp
            tp_s = 16.0 * (layers / pp) * d_model * (tp - 1) / tp * tok_per_gpu / intra_bw if tp > 1 else 0.0
            unsharded = 4.0 * params / (tp * pp) + state_bytes * params / (tp * pp * dp)
            vol = 2.0 if unsharded + mem.activations_gb * 1e9 <= mem.usable_gb * 1e9 else 3.0
            shards = dp * cp  # context-parallel ranks hold the same weights: they sync gradients too
            sync = vol * _BYTES_PER_BF16 * params / (tp * pp) * (shards - 1) / shards / dp_bw if shards > 1 else 0.0
            exposed = max(0.0, sync - fp.overlap * compute)
            a2a = 0.0
            if active_params is not None and active_params < params and gpus > 1:
                a2a_bw = nic_bw if gpus > gpn else intra_bw
                a2a = 8.0 * d_model * top_k * (layers / pp) * tok_per_gpu / tp / a2a_bw * (1.0 - fp.overlap)
            cand = Layout(
                tp=tp, pp=pp, cp=cp, dp=dp, memory=mem, compute_s=compute,
                recompute_factor=recompute_cost, host_s=host_s, bubble_s=bubble, tp_s=tp_s,
                dp_sync_s=sync, dp_exposed_s=exposed, a2a_exposed_s=a2a,
            )  # fmt: skip
            if best is None or (best.memory.offload and not mem.offload) or cand.step_s < best.step_s:
                best = cand
    if best is None:
        need = min_gpus_to_fit(
            params=params, layers=layers, d_model=d_model, seq_len=seq_len, hbm_gb=accelerator.hbm_gb,
            usable_fraction=usable, state_bytes_per_param=state_bytes, gpus_per_node=max(tps),
        )  # fmt: skip
        hint = f"at least {need} {accelerator.id} GPUs" if need else f"an accelerator with more than {accelerator.hbm_gb:g} GB"
        msg = (
            f"a {params:.3g}-parameter model at seq_len {seq_len} does not fit on {gpus} × {accelerator.id} "
            f"({accelerator.hbm_gb:g} GB HBM) even with full sharding, recompute and optimizer offload; "
            f"use {hint}"
        )
        raise MemoryFitError(msg)
    lay = best
    if lay.memory.offload:
        warnings.append(f"the model fits on {gpus} × {accelerator.id} only with the optimizer state offloaded to host memory (slow)")
    elif lay.memory.recompute and recompute is None:
        warnings.append(f"the model fits on {gpus} × {accelerator.id} only with full activation recompute (+33% compute)")
    factors.append(("memory", lay.memory.describe()))
    factors.append(("layout", (f"tensor parallel {lay.tp} × pipeline {lay.pp} × context parallel {lay.cp} × data parallel {lay.dp:g} "
                    f"(the fitting layout with the shortest step)")))  # fmt: skip
    steps = tokens / batch
    compute_hours = lay.busy_s * steps / _SECONDS_PER_HOUR
    rc = " × 4/3 recompute" if lay.memory.recompute else ""
    host = f" + {lay.host_s:.2f} s host/optimizer overhead per step" if lay.host_s else ""
    factors.append(("compute", (f"{flops:.3g} FLOPs / ({gpus} × {peak:g} TFLOP/s × {kernel_mfu:.1%}){rc}{host} = "
                    f"{compute_hours:,.1f} h of pure compute ({steps:,.0f} steps of {batch:,.0f} tokens)")))  # fmt: skip
    c = lay.busy_s
    if gpus <= gpn:
        where = f"NVLink/intra-node {accelerator.intra_node_gbytes_per_s:g} GB/s"
    else:
        share = max(1, gpn // lay.tp)
        where = (f"{instance.network_gbps:g} Gbps per node × {share}/{gpn} GPUs of the group per node "
                 f"(hierarchical collectives), capped by {accelerator.intra_node_gbytes_per_s:g} GB/s intra-node")  # fmt: skip
    factors.append(("communication", (f"per step {lay.dp_sync_s:.2f} s of data-parallel sync over {where} × "
                    f"{net_eff:.0%} vs {lay.compute_s:.2f} s compute (overlap {fp.overlap:.0%}): exposed "
                    f"{lay.dp_exposed_s:.2f} s = {lay.dp_exposed_s / c:.1%} of the step")))  # fmt: skip
    if lay.tp > 1:
        factors.append(("tensor_parallel", f"TP {lay.tp} activation all-reduces over NVLink: {lay.tp_s / c:.1%} of compute"))
    if lay.pp > 1:
        factors.append(("pipeline", (f"interleaved 1F1B bubble (pp − 1)/(micro-batches × virtual stages of "
                        f"{vstage:g} layers) = {lay.bubble_s / c:.1%} of the step")))  # fmt: skip
    if lay.a2a_exposed_s > 0:
        factors.append(("moe_all_to_all", (f"MoE token dispatch/combine (top-{top_k:g}), not overlapped share: "
                        f"{lay.a2a_exposed_s / c:.1%} of compute")))  # fmt: skip
    factors.append(straggler_factor)
    if hours is not None:
        factors.append(("hours", f"{hours:g} h of pure training, as given in the plan (overrides {compute_hours:,.1f} h)"))
        compute_hours = hours
    comm_fraction = lay.stall_s / c
    base_mfu = flops / (gpus * peak * 1e12 * compute_hours * _SECONDS_PER_HOUR)
    return TimeEstimate(
        compute_hours=compute_hours,
        comm_stall_fraction=comm_fraction,
        straggler_fraction=straggler,
        flops=flops,
        peak_tflops_per_gpu=peak,
        base_mfu=base_mfu,
        factors=tuple(factors),
        layout=lay,
        warnings=tuple(warnings),
    )
