"""The time model's answer (``TimeEstimate``, ``Layout``) and its question (``_Query``).

Kept apart from the arithmetic so callers and the explanation read the records without the
layout search."""

from __future__ import annotations

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog, Instance
from trainbill.memory import MemoryEstimate
from trainbill.timemodel.fit import FitParams

_SECONDS_PER_HOUR = 3600.0
_BYTES_PER_BF16 = 2.0
_RECOMPUTE_FACTOR = 4.0 / 3.0  # one extra forward pass over fwd (1) + bwd (2)
_CP_MIN_SEQ = 8192  # context parallelism splits sequences longer than this (Llama 3: CP16 at 128K)
_HEAD_DIM = 128  # attention head width of GPT-3 175B, Llama and most large models (heads = d / 128)


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
