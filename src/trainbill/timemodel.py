"""Time model: from model size, tokens and cluster to compute hours and synchronization stall.

Why a model and not a constant MFU: the bill is hours × price, and quotes go wrong in the hours.
Achieved throughput depends on the accelerator and precision, on the model's width, on how the
model is split over GPUs (tensor, pipeline, data parallel), on how much traffic crosses the
inter-node network per step and how much of it hides behind compute, and on the slowest GPU in
every step. Each factor is reported in ``TimeEstimate.factors`` so ``--explain`` can show it.

Formulas (constants come from the catalog: ``[time]`` assumptions and the seven fitted global
parameters ``time.fit.*`` in ``time_model_fit.toml``, written by ``tools/fit_time_model.py``,
which also reports leave-one-out cross-validated errors):

* model FLOPs = 6 · N_active · D (Kaplan et al. 2020, arXiv 2001.08361; MoE uses active
  parameters) + attention 12 · L · d_model · seq_len · D (Narayanan et al. 2021, arXiv 2104.04473
  Eq. 3 without recompute; PaLM arXiv 2204.02311 App. B). Without layers/d_model the shape is
  estimated from N = 12 · L · d² with d / L = ``time.aspect_ratio`` (GPT-3/Llama are 100–160).
  That is the conventional count MFU is quoted in; the kernels are timed on what they execute:
  a fused causal kernel skips the score blocks above the diagonal, so its attention is timed at
  ``time.causal_attention_work_share`` (0.5) of the count (FlashAttention-2, arXiv 2307.08691,
  Sec. 3.1.1; measured on one H200: causal/full 0.52–0.53 at seq 8192–16384). A measured MFU
  (``trainbill profile``, which counts causal attention in full) multiplies the full count.
* kernel time per FLOP = (g + m) / (peak_bf16 · e_max · maturity) where g = 1 for BF16 and
  1 / (η_fp8 · peak_fp8 / peak_bf16) for FP8 (only the matmuls speed up), and the memory-bound
  share m = k_mem · B / d_model with B = peak BF16 FLOP/s ÷ HBM bytes/s, the datasheet machine
  balance (H100 989e12 / 3.35e12 = 295 FLOP/byte, A100-80GB 153): element-wise work (norms,
  activations, residuals, optimizer) moves bytes ∝ width per token per layer while matmul
  FLOPs grow ∝ width², so narrow models on compute-rich chips lose the most. Full activation
  recompute (when memory requires it) adds one forward pass: × 4/3.
* MoE models (active < total parameters) divide the kernel efficiency by the fitted
  ``moe_efficiency``: grouped GEMMs over many small experts, token permutation, routing and
  load imbalance make an MoE step slower than a dense one with the same active FLOPs
  (DeepSeek-V2 reached about half of DeepSeek 67B's MFU on the same H800 cluster; Megatron-Core
  reports 39.0% MFU for fine-grained Qwen2-57B-A14B vs 49.3% for Mixtral 8x22B, arXiv 2504.14960).
* software maturity = 1 − immaturity · exp(−age / τ), age = the run's date (the plan's
  ``run.date``, else ``prices.as_of``, else today) minus the accelerator's ``launched`` date in
  the catalog, τ = ``time.maturity_tau_years``: kernels, compilers and frameworks for a new
  architecture keep improving for years after launch (MosaicML's first H100 runs in 2023
  reached 0.72–0.80× their A100 MFU; Megatron-Bridge 25.11 gets far more from the same chip),
  so a run on a young chip is slower than the same run later. Only ``immaturity`` is fitted.
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
* global batch (when the plan states none, ``default_global_batch``): 2,048 tokens per GPU
  (``defaults.model.batch_tokens_per_gpu``: LLaMA-1 4M on 2,048 A100, Megatron-LM's 1T model
  3,072 × 2,048 on 3,072 A100, Llama 3 405B 16M on 8,192 H100), times total / active parameters
  for an MoE model (each expert then sees as many tokens per step as a dense layer would:
  DeepSeek-V2 and -V3 ran 9–15× the dense batch on the same 2,048 GPUs), between 4M tokens and
  16M (dense, Llama 3 at 16,384 H100) or 63M (MoE, DeepSeek-V3).
* layout, searched as frameworks configure it: tensor parallel tp ∈ {1, 2, 4, …, GPUs per
  node} (never across nodes), pipeline pp ∈ {1, 2, 4, …}, context parallel cp, and for MoE
  models expert parallel ep ∈ {1, 2, …, ``time.moe_max_expert_parallel``} carved out of the
  data-parallel ranks (Megatron-Core, DeepSpeed-MoE). A layout is valid only if it fits in
  memory (``trainbill.memory``; FSDP/ZeRO shards the state over all GPUs, so tp 1 fits far more
  often than a replicated model would), gives every data-parallel rank at least one sequence,
  and, with a pipeline, at least pp micro-batches per pipeline (Narayanan et al. 2021 Sec. 2.2:
  the number of micro-batches must be a multiple of the pipeline degree). Of the valid layouts
  the one with the shortest step wins, the smaller tp, pp and ep on ties, so tp and pp grow
  only where memory needs them or they are faster. A stated batch too small to split over
  the GPUs is an error naming the smallest batch that works.
* data-parallel sync per step = v · 2 bytes · N / (tp · pp) · (dp − 1) / dp over the effective
  per-GPU collective bandwidth × ``time.network_efficiency``: NVLink inside one node; across
  nodes NCCL's hierarchical/multi-ring collectives give the group the bandwidth of its
  GPUs-per-node / tp NICs (the whole node's bandwidth at tp = 1, one NIC at tp = 8), capped by
  NVLink. v = 3 under ZeRO-3/FSDP, 2 when unsharded weights fit; exposed = max(0, sync −
  overlap · compute). For MoE the expert weights (total − active parameters) are split over
  ep ranks and synchronised only among the dp / ep ranks that hold the same experts, with the
  hierarchical bandwidth of gpn / (tp · ep) NICs (a node pre-reduces an expert only over its
  GPUs that hold it).
* tensor parallel: 16 · (L / pp) · d · (tp − 1) / tp bytes per token over NVLink, not hidden.
* context parallel cp splits sequences longer than 8192 tokens (KV exchange not modelled).
* pipeline bubble (interleaved 1F1B, Narayanan et al. 2021 Sec. 2.2.2) = (pp − 1) / (micro-batches
  · v) with v = L / (pp · ``time.layers_per_virtual_stage``) virtual stages per GPU, one
  sequence per micro-batch.
* MoE all-to-all (ep > 1 only: with every expert local no token leaves the GPU): active tokens
  per GPU × d × top_k × (L / pp) × ``time.moe_all_to_all_bytes_*`` (8 bytes in BF16: dispatch and
  combine, forward and backward; 6 in FP8: DeepSeek-V3 dispatches in FP8) × (ep − 1) / ep of
  the routed copies leave the GPU: those to GPUs of the same node over NVLink, the rest over the
  GPU's own NIC (both links run at once). Exposed = max(0, all-to-all −
  ``time.moe_all_to_all_overlap`` · compute): DeepSeek-V3's DualPipe and Megatron-Core's EP
  overlap hide it behind compute up to the compute time.
* straggler stall = cv · sqrt(2 ln G) (expected maximum of G Gaussian step times).
"""

from __future__ import annotations

import math
from dataclasses import replace

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog, Instance
from trainbill.errors import SpecError
from trainbill.memory import MemoryEstimate, MemoryFitError, memory_per_gpu, min_gpus_to_fit

__all__ = [
    "BandQuantiles",
    "FitParams",
    "Layout",
    "TimeEstimate",
    "default_global_batch",
    "error_band_quantiles",
    "estimate_shape",
    "estimate_time",
    "executed_flops",
    "executed_share",
    "fit_params",
    "training_flops",
]

_SECONDS_PER_HOUR = 3600.0
_BYTES_PER_BF16 = 2.0
_RECOMPUTE_FACTOR = 4.0 / 3.0  # one extra forward pass over fwd (1) + bwd (2)
_CP_MIN_SEQ = 8192  # context parallelism splits sequences longer than this (Llama 3: CP16 at 128K)
_HEAD_DIM = 128  # attention head width of GPT-3 175B, Llama and most large models (heads = d / 128)


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


@record
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
    #: Expert-parallel ranks (1 for a dense model, or an MoE model with every expert on every GPU).
    ep: int = 1
    #: MoE all-to-all seconds per step before overlap (``a2a_exposed_s`` is what is not hidden).
    a2a_s: float = 0.0

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


@record
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
    #: The plan stated its training hours (``run.hours``): they are the user's figure, not the
    #: model's, so no time-model error band applies to them (``forecast``, ``simulate``).
    hours_given: bool = False

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


def executed_flops(
    catalog: Catalog,
    *,
    active_params: float,
    tokens: float,
    layers: int,
    d_model: int,
    seq_len: int,
    fused_attention: bool = True,
) -> float:
    """The FLOPs the kernels execute, which time follows: ``training_flops`` with a fused
    causal kernel's skipped score blocks (above the diagonal) taken out of its attention term
    (``time.causal_attention_work_share``); an unfused kernel computes the whole matrix."""
    counted = training_flops(
        active_params=active_params, tokens=tokens, layers=layers, d_model=d_model, seq_len=seq_len
    )
    if not fused_attention:
        return counted
    dense = training_flops(active_params=active_params, tokens=tokens)
    share = float(catalog.value("time.causal_attention_work_share"))
    return dense + share * (counted - dense)


def _shape(
    catalog: Catalog, active_params: float, layers: int | None, d_model: int | None
) -> tuple[int, int]:
    """The model's (layers, d_model): as given, else estimated from its size
    (``estimate_shape`` with ``time.aspect_ratio``)."""
    if layers is None or d_model is None:
        est_l, est_d = estimate_shape(active_params, float(catalog.value("time.aspect_ratio")))
        return layers or est_l, d_model or est_d
    return layers, d_model


def executed_share(
    catalog: Catalog,
    *,
    active_params: float,
    seq_len: int,
    layers: int | None = None,
    d_model: int | None = None,
) -> float:
    """Executed over counted FLOPs per token (``executed_flops`` / ``training_flops``) with
    fused attention, the shape estimated from the size as the time model estimates it when
    not given: how much of the conventional count a step's kernels run at that sequence length.
    """
    layers, d_model = _shape(catalog, active_params, layers, d_model)
    executed = executed_flops(catalog, active_params=active_params, tokens=1.0, layers=layers,
                              d_model=d_model, seq_len=seq_len)  # fmt: skip
    counted = training_flops(active_params=active_params, tokens=1.0, layers=layers,
                             d_model=d_model, seq_len=seq_len)  # fmt: skip
    return executed / counted


def default_global_batch(
    catalog: Catalog, *, gpus: int, params: float, active_params: float | None, seq_len: int
) -> tuple[float, str]:
    """The global batch a competent team would pick for this cluster, and why, in words.

    Teams grow the batch with the cluster so every GPU keeps enough work per step: 2,048 tokens
    per GPU reproduces LLaMA-1 (4M on 2,048 A100), Megatron-LM's 1T model (3,072 × 2,048 on
    3,072 A100) and Llama 3 405B (16M on 8,192 H100). An MoE expert sees only top-k / experts of
    the tokens, so the batch is scaled by total / active parameters to give each expert a dense
    layer's share (DeepSeek-V2 ran 37.7M and DeepSeek-V3 63M tokens on 2,048 H800, where the
    dense rule gives 4.2M). The batch is held between the published floor (4M = 2^22 tokens)
    and ceiling (16M dense, 63M MoE): past the critical batch size more tokens per step stop
    buying progress, and the time model would not charge for that. It is then rounded to whole
    sequences, as a batch is configured.
    """
    per_gpu = float(catalog.value("defaults.model.batch_tokens_per_gpu"))
    floor = float(catalog.value("defaults.model.global_batch_tokens"))
    moe = active_params is not None and active_params < params
    cap_key = (
        "defaults.model.global_batch_tokens_max_moe"
        if moe
        else "defaults.model.global_batch_tokens_max"
    )
    cap = float(catalog.value(cap_key))
    sparsity = params / active_params if moe and active_params else 1.0
    raw = per_gpu * gpus * sparsity
    held = max(min(max(raw, floor), cap), float(seq_len))
    # A batch is a whole number of sequences: the nearest, kept under the ceiling.
    seqs = max(1, round(held / seq_len))
    if seqs > 1 and seqs * seq_len > cap:
        seqs -= 1
    batch = float(seqs * seq_len)
    scale = f" × {sparsity:.3g} (total / active parameters: MoE)" if moe else ""
    bound = " (the floor)" if raw < floor else " (the ceiling)" if raw > cap else ""
    why = (
        f"global batch {batch:,.0f} tokens ({seqs:,} sequences of {seq_len}): "
        f"{per_gpu:,.0f} tokens per GPU × {gpus:,} GPUs{scale} = {raw:,.0f}, held within "
        f"{floor:,.0f}–{cap:,.0f}{bound} "
        f"({catalog.assumption('defaults.model.batch_tokens_per_gpu').source}; "
        f"{catalog.assumption(cap_key).source})"
    )
    return batch, why


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
class _Query:
    """One ``estimate_time`` question: the workload and cluster facts, and the fit to use.

    The fields are ``estimate_time``'s keywords, with ``fit`` resolved to ``fp`` and the
    accelerator's peak at the plan's precision read once.
    """

    catalog: Catalog
    accelerator: Accelerator
    instance: Instance
    fp: FitParams
    nodes: int
    precision: str
    #: Hours of pure training stated by the plan: only the stall is modelled on top of them.
    hours: float | None
    params: float | None
    active_params: float | None
    tokens: float | None
    global_batch_tokens: float
    seq_len: int
    layers: int | None
    d_model: int | None
    straggler_cv: float
    #: Activation recompute forced on/off (a published config), or None to follow memory.
    recompute: bool | None
    #: A measured MFU (``trainbill profile``) in place of the modelled kernel efficiency.
    measured_mfu: float | None
    #: False for software from before FlashAttention (2022): seq × seq scores go through HBM.
    fused_attention: bool
    #: The run's date minus the accelerator's launch; None: launch unknown, software mature.
    software_age_years: float | None
    #: How the global batch was chosen when the plan did not state it (shown among the factors).
    batch_note: str | None
    #: Dense peak TFLOP/s per accelerator at ``precision``.
    peak: float
    #: ``transformer``, ``state-space`` or ``hybrid`` (``spec.Architecture``).
    architecture: str = "transformer"
    #: Share of the token-mixing layers that are attention: 1 for a transformer, 0 for a
    #: state-space model, the plan's (or ``time.hybrid_attention_share``) for a hybrid.
    attention_share: float = 1.0

    @property
    def gpn(self) -> int:
        """Accelerators per node (per billed unit)."""
        return self.instance.accelerator_count

    @property
    def gpus(self) -> int:
        """Accelerators in the cluster."""
        return self.nodes * self.instance.accelerator_count

    @property
    def bf16(self) -> float:
        """Dense BF16 peak TFLOP/s: the kernel model's reference speed."""
        return self.accelerator.peak_bf16_tflops


@record
class _Work:
    """The model's size, shape and total work (FLOPs), the shape estimated when not given."""

    params: float
    n_active: float
    tokens: float
    layers: int
    d_model: int
    #: The plan gave no layers or no width, so the shape comes from the size.
    shape_estimated: bool
    flops: float
    #: FLOPs the kernels execute: ``flops`` with a fused causal kernel's skipped attention
    #: blocks taken out. Time follows these; MFU keeps the conventional count above.
    kernel_flops: float
    #: Whether active < total parameters (an MoE model).
    sparse: bool
    #: Selective-scan FLOPs per token (0 for a transformer), counted in ``flops``.
    scan_flops_per_token: float = 0.0
    #: Mamba blocks per token's pass (two per transformer-layer equivalent of the shape).
    ssm_blocks: float = 0.0

    @property
    def flops_per_token(self) -> float:
        """Model FLOPs per training token."""
        return self.flops / self.tokens

    @property
    def kernel_flops_per_token(self) -> float:
        """Executed FLOPs per training token (see ``kernel_flops``)."""
        return self.kernel_flops / self.tokens


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
    """The straggler stall: the expected maximum of G Gaussian step times, cv · sqrt(2 ln G)."""
    return straggler_cv * math.sqrt(2.0 * math.log(gpus)) if gpus > 1 else 0.0


def _work(q: _Query) -> _Work | None:
    """The model's shape and FLOPs, or None when the plan gives no model size or tokens."""
    n_active = q.active_params if q.active_params is not None else q.params
    if q.params is None or n_active is None or q.tokens is None:
        return None
    layers, d_model = _shape(q.catalog, n_active, q.layers, q.d_model)
    flops = training_flops(
        active_params=n_active, tokens=q.tokens, layers=layers, d_model=d_model, seq_len=q.seq_len
    )
    kernel_flops = executed_flops(q.catalog, active_params=n_active, tokens=q.tokens,
                                  layers=layers, d_model=d_model, seq_len=q.seq_len,
                                  fused_attention=q.fused_attention)  # fmt: skip
    dense = training_flops(active_params=n_active, tokens=q.tokens)
    ssm_blocks, scan = _ssm_terms(q.catalog, layers=layers, d_model=d_model,
                                  attention_share=q.attention_share)  # fmt: skip
    # Only the attention share of the layers has attention; the rest run selective scans.
    flops = dense + q.attention_share * (flops - dense) + scan * q.tokens
    kernel_flops = dense + q.attention_share * (kernel_flops - dense) + scan * q.tokens
    return _Work(
        params=q.params,
        n_active=n_active,
        tokens=q.tokens,
        layers=layers,
        d_model=d_model,
        shape_estimated=q.layers is None or q.d_model is None,
        flops=flops,
        kernel_flops=kernel_flops,
        sparse=q.active_params is not None and q.active_params < q.params,
        scan_flops_per_token=scan,
        ssm_blocks=ssm_blocks,
    )


def _ssm_terms(
    catalog: Catalog, *, layers: int, d_model: int, attention_share: float
) -> tuple[float, float]:
    """(Mamba blocks, selective-scan training FLOPs per token) of a model's state-space share.

    A Mamba block holds 3·E·d² = 6·d² parameters (E = 2), half a transformer layer's 12·d²
    (Gu & Dao 2023 Sec. 3.4), so the same size and shape has two blocks per transformer layer
    (``time.ssm_expand``). Its matmuls are in 6·N like any layer's; the scan adds 9 FLOPs per
    inner channel per state element per token forward, × 3 for training (``time.ssm_scan_flops``,
    ``time.ssm_state_size``): well under 1% of the FLOPs, but run on vector units and memory
    bound, which ``_kernel`` charges as ``m_ssm``.
    """
    if attention_share >= 1.0:
        return 0.0, 0.0
    expand = float(catalog.value("time.ssm_expand"))
    blocks = 12.0 / (3.0 * expand) * layers * (1.0 - attention_share)
    per_block = (
        3.0
        * float(catalog.value("time.ssm_scan_flops"))
        * expand
        * d_model
        * float(catalog.value("time.ssm_state_size"))
    )
    return blocks, blocks * per_block


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


# Explanations: every ``--explain`` line and warning, rendered from the computed records above
# after the arithmetic is done (in the order the factors are shown).

_Factor = tuple[str, str]


def _explain(run: _Run) -> tuple[_Factor, ...]:
    """Every factor of a modelled run, in the order ``--explain`` shows them."""
    return (
        *_cluster_notes(run.q),
        *_work_notes(run.q, run.work),
        *_kernel_notes(run),
        *_layout_notes(run),
        *_step_notes(run),
        _straggler_note(run.q, run.straggler),
        *_hours_note(run),
    )


def _cluster_notes(q: _Query) -> list[_Factor]:
    """The accelerator, the cluster and, when FP8 was asked for but not used, why."""
    acc, inst = q.accelerator, q.instance
    return [
        (
            "accelerator",
            (
                f"{acc.name}: dense {q.precision} peak {q.peak:g} TFLOP/s, "
                f"{acc.hbm_gb:g} GB HBM at {acc.hbm_tbps:g} TB/s "
                f"({acc.source})"
            ),
        ),
        (
            "gpus",
            (
                f"{q.nodes} × {inst.instance} × {q.gpn} = {q.gpus} accelerators; "
                f"{inst.network_gbps:g} Gbps per node between nodes, "
                f"{acc.intra_node_gbytes_per_s:g} GB/s inside"
            ),
        ),
        *_precision_note(q),
    ]


def _precision_note(q: _Query) -> list[_Factor]:
    """Why FP8 was asked for and BF16 speed is used (no FP8 units, or FP8 no faster)."""
    acc, fp8_peak = q.accelerator, q.accelerator.peak_fp8_tflops
    if q.precision in ("fp16", "tf32", "fp32"):
        found = acc.precision_peak(q.precision)
        why = found[1] if found is not None else "?"
        nbytes = _activation_bytes(q.precision)
        return [
            (
                "precision",
                (
                    f"{q.precision} on {acc.id}: matmuls at {q.peak:g} TFLOP/s ({why}), "
                    f"{q.bf16 / q.peak:.3g}× BF16 time per matmul FLOP; {nbytes:g}-byte "
                    "activations and gradients"
                    + (" (memory-bound work and gradient sync × 2)" if nbytes > 2 else "")
                ),
            )
        ]
    if q.precision != "fp8" or _fp8_usable(q):
        return []
    if fp8_peak is None:
        return [("precision", f"{acc.id} has no FP8 units: BF16 peak used")]
    return [
        (
            "precision",
            (
                f"FP8 on {acc.id} is no faster than BF16 (FP8 peak "
                f"{fp8_peak:g} × η_fp8 {q.fp.eta_fp8:.2f} ≤ BF16 peak "
                f"{q.bf16:g} TFLOP/s): BF16 speed used"
            ),
        )
    ]


def _architecture_note(q: _Query, w: _Work) -> list[_Factor]:
    """What the architecture changes: attention layers, Mamba blocks, the scans' terms."""
    if q.architecture == "transformer":
        return []
    c = q.catalog
    mix = (
        "every token-mixing layer a Mamba selective-scan block (Gu & Dao 2023, arXiv 2312.00752)"
        if q.architecture == "state-space"
        else (
            f"{q.attention_share:.3g} of the token-mixing layers attention, the rest Mamba "
            f"blocks ({c.assumption('time.hybrid_attention_share').source.split(';')[0]})"
        )
    )
    return [
        (
            "architecture",
            (
                f"{q.architecture}: {mix}; {w.ssm_blocks:g} Mamba blocks of 3 × E "
                f"{c.value('time.ssm_expand'):g} × d² parameters (two per 12·d² layer of the "
                f"estimated shape), state N {c.value('time.ssm_state_size'):g}; activation "
                "memory as a FlashAttention transformer's (Gu & Dao 2023 Sec. 3.3.2)"
            ),
        )
    ]


def _work_notes(q: _Query, w: _Work) -> list[_Factor]:
    """How the shape was estimated (when it was), the architecture and the model FLOPs."""
    out: list[_Factor] = _architecture_note(q, w)
    if w.shape_estimated:
        aspect = float(q.catalog.value("time.aspect_ratio"))
        out.append(
            (
                "shape",
                (
                    f"layers/d_model not given: estimated {w.layers} × {w.d_model} from "
                    f"{w.n_active:.3g} = 12·L·d² with d/L = {aspect:g} "
                    f"({q.catalog.assumption('time.aspect_ratio').source})"
                ),
            )
        )
    attn = q.attention_share * 12.0 * w.layers * w.d_model * q.seq_len * w.tokens
    mixed = "" if q.attention_share == 1.0 else f"{q.attention_share:g} × "
    scan = (
        f" + selective scan {w.scan_flops_per_token:.3g} FLOPs/token × {w.tokens:.3g} tokens"
        if w.scan_flops_per_token
        else ""
    )
    out.append(("flops", (f"6 × {w.n_active:.3g} active params × {w.tokens:.3g} tokens + "
                f"attention {mixed}12 × {w.layers} × {w.d_model} × {q.seq_len} × "
                f"{w.tokens:.3g}{scan} = {w.flops:.3g} FLOPs ({attn / w.flops:.1%} "
                "attention)")))  # fmt: skip
    if w.kernel_flops < w.flops and q.measured_mfu is None:
        share = q.catalog.assumption("time.causal_attention_work_share")
        out.append(("causal", (f"fused causal attention runs {share.value:g} of its counted "
                    f"FLOPs (blocks above the diagonal skipped): {w.kernel_flops:.3g} FLOPs "
                    f"timed; MFU keeps the full count (time.causal_attention_work_share, "
                    f"{share.as_of})")))  # fmt: skip
    return out


def _kernel_notes(run: _Run) -> list[_Factor]:
    """Unfused attention, the kernel efficiency (modelled or measured) and what FP8 buys."""
    q, w, k = run.q, run.work, run.kernel
    out: list[_Factor] = []
    if not q.fused_attention:
        out.append(
            (
                "attention",
                (
                    "unfused attention (software from before FlashAttention, "
                    f"time.fused_attention_since {q.catalog.value('time.fused_attention_since')}): "
                    f"k_attn {q.fp.k_attn:.3g} bytes × {w.layers} layers × "
                    f"{w.d_model / _HEAD_DIM:g} heads × {q.seq_len} scores per token through HBM "
                    f"= {k.m_attn:.3f} of matmul time"
                ),
            )
        )
    if k.m_ssm:
        out.append(
            (
                "selective_scan",
                (
                    f"Mamba blocks: {q.catalog.value('time.ssm_bytes_per_channel'):g} bytes per "
                    f"inner channel per token (time.ssm_bytes_per_channel, from a public H100 "
                    f"throughput measurement) × {w.ssm_blocks:g} blocks × "
                    f"{q.catalog.value('time.ssm_expand'):g} × {w.d_model} channels through "
                    f"HBM = {k.m_ssm:.3f} of matmul time"
                ),
            )
        )
    if q.measured_mfu is not None:
        out += _measured_notes(q.measured_mfu, run.modelled, precision=q.precision)
    else:
        out += _modelled_kernel_notes(q, w, k)
    if k.fp8:
        speedup = (1.0 + k.m) / (k.g + k.m)
        out.append(
            (
                "precision",
                (
                    f"FP8: matmuls at η_fp8 {q.fp.eta_fp8:.2f} × {q.peak / q.bf16:.2f}× BF16 "
                    f"peak, memory-bound work unchanged → {speedup:.2f}× BF16 speed"
                ),
            )
        )
    return out


def _measured_notes(measured_mfu: float, modelled: _Kernel, *, precision: str) -> list[_Factor]:
    """What a measured MFU replaced, and that the measurement is the kernel efficiency."""
    # The measured step ran on the user's own software: no modelled ceiling, memory-bound
    # share or software-maturity factor applies (the calibration line names what it replaced).
    return [
        (
            "calibration",
            (
                f"measured MFU {measured_mfu:.1%} (trainbill profile) replaces the "
                f"modelled kernel efficiency {modelled.kernel_mfu:.1%}"
            ),
        ),
        (
            "kernel",
            (
                f"measured {measured_mfu:.1%} of {precision} peak (trainbill profile) before "
                f"communication; the software-maturity factor is not applied to a measurement"
            ),
        ),
    ]


def _modelled_kernel_notes(q: _Query, w: _Work, k: _Kernel) -> list[_Factor]:
    """The modelled kernel efficiency in words (maturity, ceiling, memory-bound share, MoE)."""
    fp, acc = q.fp, q.accelerator
    moe_txt = (
        (
            f", × MoE kernel efficiency {k.moe_eff:.3f} (fitted: grouped expert GEMMs, token "
            "permutation, routing and load imbalance)"
        )
        if w.sparse
        else ""
    )
    kernel = (
        f"e_max {fp.e_max:.3f} × maturity {k.maturity:.3f} / (matmul {k.g:.3f} + "
        f"memory-bound {k.m:.3f}) on BF16 peak: m = k_mem {fp.k_mem:.3g} × ({q.bf16:g} "
        f"TFLOP/s ÷ {acc.hbm_tbps:g} TB/s = {_machine_balance(acc):.0f} FLOP/byte) ÷ "
        f"d_model {w.d_model}{_extra_memory_note(k)}{moe_txt} → {k.kernel_mfu:.1%} of "
        f"{q.precision} peak before "
        f"recompute and communication (fit: {q.catalog.assumption('time.fit.e_max').source})"
    )
    return [
        ("maturity", _maturity_note(acc, fp, q.software_age_years, k.maturity)),
        ("kernel", kernel),
    ]


def _extra_memory_note(k: _Kernel) -> str:
    """What the memory-bound share holds besides k_mem's element-wise work: FP32's doubled
    bytes, the Mamba blocks' scans and unfused attention (each its own factor line)."""
    parts = []
    if k.byte_scale != 1.0:
        parts.append(f" × {k.byte_scale:g} (4-byte activations)")
    if k.m_ssm:
        parts.append(f" + selective scan {k.m_ssm:.3f}")
    if k.m_attn:
        parts.append(f" + unfused attention {k.m_attn:.3f}")
    return "".join(parts)


def _maturity_note(
    accelerator: Accelerator, fp: FitParams, age: float | None, maturity: float
) -> str:
    """The software-maturity factor in words, for ``--explain``."""
    if age is None:
        return f"{accelerator.id} launch date unknown: software taken as mature (× 1)"
    launched = accelerator.launched.isoformat() if accelerator.launched else "?"
    # Two decimals of age and four digits of immaturity: the printed arithmetic must give the
    # printed factor by hand (one decimal of age was off by up to 0.004 at two years).
    when = (
        f"{age:.2f} years before the run"
        if age >= 0
        else (
            f"{-age:.2f} years after the run date (a run before launch counts as age 0, "
            "brand-new software)"
        )
    )
    return (
        f"{accelerator.id} launched {launched}, {when}: kernels at 1 − {fp.immaturity:.4g} × "
        f"exp(−{max(age, 0.0):.2f} / {fp.maturity_tau_years:g}) = {maturity:.3f} of mature "
        "efficiency (fitted shortfall of new software on a new chip)"
    )


def _layout_notes(run: _Run) -> list[_Factor]:
    """Memory, batch, layout and pure-compute lines of the chosen layout."""
    q, s, lay = run.q, run.space, run.layout
    out: list[_Factor] = [("memory", lay.memory.describe())]
    if q.batch_note:
        out.append(("batch", q.batch_note))
    ep_txt = f" (expert parallel {lay.ep} within it)" if s.moe else ""
    out.append(
        (
            "layout",
            (
                f"tensor parallel {lay.tp} × pipeline {lay.pp} × context parallel {lay.cp} × data "
                f"parallel {lay.dp:g}{ep_txt}, {s.seqs / lay.dp:,.4g} sequences per data-parallel "
                "rank per step (of the layouts that fit in memory and split the batch, the "
                "shortest step; tensor parallel within a node)"
            ),
        )
    )
    rc = " × 4/3 recompute" if lay.memory.recompute else ""
    host = f" + {lay.host_s:.2f} s host/optimizer overhead per step" if lay.host_s else ""
    out.append(
        (
            "compute",
            (
                f"{run.work.flops:.3g} FLOPs / ({s.gpus} × {q.peak:g} TFLOP/s × "
                f"{run.kernel.kernel_mfu:.1%}){rc}{host} = {run.modelled_hours:,.1f} h of pure "
                f"compute ({run.steps:,.0f} steps of {s.batch:,.0f} tokens)"
            ),
        )
    )
    return out


def _step_notes(run: _Run) -> list[_Factor]:
    """The step's communication, tensor-parallel, pipeline and MoE shares in words."""
    s, lay, acc = run.space, run.layout, run.q.accelerator
    net_eff = float(run.q.catalog.value("time.network_efficiency"))
    c = lay.busy_s
    link = "ICI" if run.q.instance.billing == "chip" else "NVLink"  # a TPU's chips: ICI
    if s.gpus <= s.gpn:
        where = f"{link}/intra-node {acc.intra_node_gbytes_per_s:g} GB/s"
    else:
        share = max(1, s.gpn // lay.tp)
        where = (
            f"{run.q.instance.network_gbps:g} Gbps per node × {share}/{s.gpn} GPUs of the group "
            f"per node (hierarchical collectives), capped by {acc.intra_node_gbytes_per_s:g} "
            "GB/s intra-node"
        )
    out: list[_Factor] = [
        (
            "communication",
            (
                f"per step {lay.dp_sync_s:.2f} s of data-parallel sync over {where} × "
                f"{net_eff:.0%} vs {lay.compute_s:.2f} s compute (overlap {s.overlap:.0%}): "
                f"exposed {lay.dp_exposed_s:.2f} s = {lay.dp_exposed_s / c:.1%} of the step"
            ),
        )
    ]
    if lay.tp > 1:
        out.append(
            (
                "tensor_parallel",
                f"TP {lay.tp} activation all-reduces over {link}: {lay.tp_s / c:.1%} of compute",
            )
        )
    if lay.pp > 1:
        chunks = max(1.0, s.layers / (lay.pp * s.vstage))
        out.append(
            (
                "pipeline",
                (
                    "interleaved 1F1B bubble (pp − 1)/(micro-batches × virtual stages of "
                    f"{s.vstage:g} layers) = {lay.pp - 1}/({s.seqs / lay.dp:,.4g} × {chunks:.3g}) "
                    f"= {lay.bubble_s / c:.1%} of the step"
                ),
            )
        )
    if s.moe:
        out.append(("moe_all_to_all", f"MoE token dispatch/combine: {_a2a_note(s, lay)}"))
    return out


def _a2a_note(s: _Space, lay: Layout) -> str:
    """The MoE all-to-all of the chosen layout in words."""
    if lay.ep <= 1:
        return (
            "expert parallel 1: every GPU holds every expert, no token leaves its GPU (no "
            "all-to-all)"
        )
    return (
        f"{s.a2a_bytes:g} bytes ({'FP8 dispatch' if s.fp8 else 'BF16'}) × d_model × "
        f"top-{s.top_k:g} per token per layer, {lay.ep - 1}/{lay.ep} of the copies leave the GPU: "
        f"{lay.a2a_s:.2f} s per step vs {lay.compute_s:.2f} s compute; hidden up to "
        f"{s.a2a_overlap:.0%} of compute (DualPipe / Megatron-Core EP overlap) → exposed "
        f"{lay.a2a_exposed_s / lay.busy_s:.1%} of the step"
    )


def _straggler_note(q: _Query, straggler: float) -> _Factor:
    """The straggler stall's line."""
    return (
        "stragglers",
        (
            f"slowest of {q.gpus} GPUs: cv {q.straggler_cv:g} × sqrt(2 ln {q.gpus}) = "
            f"{straggler:.1%} per step"
        ),
    )


def _hours_note(run: _Run) -> list[_Factor]:
    """The plan's stated hours, when they override the modelled ones."""
    if run.q.hours is None:
        return []
    return [
        (
            "hours",
            (
                f"{run.q.hours:g} h of pure training, as given in the plan (overrides "
                f"{run.modelled_hours:,.1f} h)"
            ),
        )
    ]


def _warnings(run: _Run) -> tuple[str, ...]:
    """What a user should hear about: a run dated before its chip's launch, offload, recompute."""
    q = run.q
    out: list[str] = []
    age = q.software_age_years
    if q.measured_mfu is None and age is not None and age < 0:
        out.append(
            f"run.date (default prices.as_of) is {-age:.2f} years before "
            f"{q.accelerator.id} launched ({q.accelerator.launched}, catalog accelerators.csv "
            f"launched): its software is taken as brand-new (maturity {run.kernel.maturity:.3f})"
        )
    if q.precision == "bf16" and not q.accelerator.bf16_units:
        out.append(
            f"{q.accelerator.id} has no BF16 units: its catalog bf16 figure ({q.bf16:g} TFLOP/s) "
            "is its FP16 tensor rate (accelerator_peaks.csv), which BF16 matmuls do not run at "
            "on this part; teams train it in fp16 (--precision fp16, model.precision)"
        )
    lay = run.layout
    share = float(q.catalog.value("time.single_node_overhead_warning_share"))
    if q.measured_mfu is None and q.nodes == 1 and lay.host_s > share * lay.step_s:
        # Fitted to multi-node runs, the per-step overhead is most of what the model gets wrong
        # on one node: the measured one-GPU H200 steps (benchmarks/results/h200-2026-12-04) ran
        # 39-64% faster than modelled, within -8%..+4% without it (tools/fit_time_model.py).
        out.append(
            f"one node: {lay.host_s:.2f} s of each {lay.step_s:.2f} s step "
            f"({lay.host_s / lay.step_s:.0%}) is the per-step "
            "overhead fitted to multi-node runs (time.fit.step_overhead_s); one-GPU steps "
            "measured on an H200 had none, so the hours may be overstated: measure a step "
            "(trainbill profile -o cal.toml) and forecast with --calibration cal.toml"
        )
    out += _layout_warnings(lay, gpus=q.gpus, accelerator=q.accelerator, recompute=q.recompute)
    return tuple(out)


def _layout_warnings(
    lay: Layout, *, gpus: int, accelerator: Accelerator, recompute: bool | None
) -> list[str]:
    """What the chosen layout costs that a user should hear about (offload, forced recompute)."""
    if lay.memory.offload:
        return [
            (
                f"the model fits on {gpus} × {accelerator.id} only with the optimizer state "
                "offloaded to host memory (slow)"
            )
        ]
    if lay.memory.recompute and recompute is None:
        return [
            (
                f"the model fits on {gpus} × {accelerator.id} only with full activation recompute "
                "(+33% compute)"
            )
        ]
    return []


def _hours_only(q: _Query, straggler: float) -> TimeEstimate:
    """A plan with stated hours and no model size: only the stragglers can be modelled."""
    if q.hours is None:  # pragma: no cover - the plan validator requires hours or a model
        msg = "give either run hours or model params and tokens"
        raise MemoryFitError(msg)
    factors = (
        *_cluster_notes(q),
        ("hours", f"{q.hours:g} h of pure training, as given in the plan"),
        ("communication", "model size unknown: gradient sync not modelled"),
        _straggler_note(q, straggler),
    )
    return TimeEstimate(
        compute_hours=q.hours, comm_stall_fraction=0.0, straggler_fraction=straggler, flops=None,
        peak_tflops_per_gpu=q.peak, base_mfu=None, factors=factors, hours_given=True,
    )  # fmt: skip


def _estimate(q: _Query) -> TimeEstimate:
    """The named steps: work, kernel efficiency, layout search, then the explanation."""
    straggler = _straggler_share(q.straggler_cv, q.gpus)
    w = _work(q)
    if w is None:
        return _hours_only(q, straggler)
    modelled = _kernel(q, w, fp8=_fp8_usable(q))
    k = modelled
    if q.measured_mfu is not None:
        k = _measured_kernel(modelled, q.measured_mfu, q.peak)
    s = _search_space(q, w, k)
    lay = _choose_layout(s, q.accelerator)
    run = _Run(q=q, work=w, modelled=modelled, kernel=k, space=s, layout=lay, straggler=straggler)
    hours = run.compute_hours
    return TimeEstimate(
        compute_hours=hours,
        comm_stall_fraction=lay.stall_s / lay.busy_s,
        straggler_fraction=straggler,
        flops=w.flops,
        peak_tflops_per_gpu=q.peak,
        base_mfu=w.flops / (q.gpus * q.peak * 1e12 * hours * _SECONDS_PER_HOUR),
        factors=_explain(run),
        layout=lay,
        warnings=_warnings(run),
        hours_given=q.hours is not None,
    )


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
    batch_note: str | None = None,
    architecture: str = "transformer",
    attention_share: float | None = None,
) -> TimeEstimate:
    """Estimate compute hours and the sync-stall fraction for a cluster.

    When ``hours`` is given it is taken as the wall-clock of pure training and only the stall
    is modelled; otherwise hours are derived from FLOPs and the fitted efficiency model.
    ``fit`` overrides the catalog's fitted parameters (the fit script searches over them).
    ``measured_mfu`` (from ``trainbill profile``) replaces the modelled kernel efficiency: a
    measured step is better evidence than the fit, and it already includes any recompute the
    user runs, so the recompute factor is not applied again; layout, communication, bubbles
    and stragglers still come from the model, which is how the measurement extrapolates to the
    plan's GPUs. ``fused_attention=False`` describes software from before FlashAttention
    (2022): the published runs of that era (Megatron-LM 2021, OPT-175B) use it so the fit can
    learn from them without mistaking old attention kernels for a slow accelerator. The other
    keywords are described on ``_Query``; ``attention_share`` is a hybrid's (else
    ``time.hybrid_attention_share``), ignored for the other architectures.

    Raises:
        MemoryFitError: the model cannot fit on this many accelerators, even with offload.
    """
    q = _Query(catalog=catalog, accelerator=accelerator, instance=instance,
               fp=fit or fit_params(catalog), nodes=nodes, precision=precision, hours=hours,
               params=params, active_params=active_params, tokens=tokens,
               global_batch_tokens=global_batch_tokens, seq_len=seq_len, layers=layers,
               d_model=d_model, straggler_cv=straggler_cv, recompute=recompute,
               measured_mfu=measured_mfu, fused_attention=fused_attention,
               software_age_years=software_age_years, batch_note=batch_note,
               peak=accelerator.peak_tflops(precision), architecture=architecture,
               attention_share=_attention_share(catalog, architecture, attention_share),
               )  # fmt: skip
    return _estimate(q)


def _attention_share(catalog: Catalog, architecture: str, given: float | None) -> float:
    """Share of the token-mixing layers that are attention: 1 for a transformer, 0 for a
    state-space model, a hybrid's own or the catalog's default (``time.hybrid_attention_share``,
    Jamba's 1:7)."""
    if architecture == "transformer":
        return 1.0
    if architecture == "state-space":
        return 0.0
    if architecture != "hybrid":
        msg = f"{architecture!r} is not allowed; allowed values: transformer, state-space, hybrid"
        raise SpecError(msg, field="model.architecture")
    if given is not None:
        return given
    return float(catalog.value("time.hybrid_attention_share"))
