"""Explanations: every ``--explain`` line and warning, rendered from the computed records
after the arithmetic is done (in the order the factors are shown)."""

from __future__ import annotations

from trainbill.catalog import Accelerator
from trainbill.timemodel.fit import FitParams
from trainbill.timemodel.kernel import _activation_bytes, _fp8_usable, _Kernel, _machine_balance
from trainbill.timemodel.layout import _Run, _Space
from trainbill.timemodel.records import _HEAD_DIM, Layout, _Query
from trainbill.timemodel.work import _Work

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
