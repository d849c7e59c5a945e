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

from trainbill.timemodel.estimate import NODE_KEYWORDS, estimate_time
from trainbill.timemodel.fit import BandQuantiles, FitParams, error_band_quantiles, fit_params
from trainbill.timemodel.layout import _dp_bandwidth as _dp_bandwidth  # tests read it
from trainbill.timemodel.records import Layout, TimeEstimate
from trainbill.timemodel.sweep import SweptTimes, estimate_sweep, estimate_times
from trainbill.timemodel.work import (
    default_global_batch,
    default_global_batches,
    estimate_shape,
    executed_flops,
    executed_share,
    training_flops,
)

__all__ = [
    "NODE_KEYWORDS",
    "BandQuantiles",
    "FitParams",
    "Layout",
    "SweptTimes",
    "TimeEstimate",
    "default_global_batch",
    "default_global_batches",
    "error_band_quantiles",
    "estimate_shape",
    "estimate_sweep",
    "estimate_time",
    "estimate_times",
    "executed_flops",
    "executed_share",
    "fit_params",
    "training_flops",
]
