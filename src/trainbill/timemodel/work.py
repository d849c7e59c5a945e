"""The work: model shape, FLOPs (counted and executed) and the default global batch.

Pure functions of the model and the catalog's ``[time]`` constants, used by the time model,
the what-ifs, calibration and the fit tool."""

from __future__ import annotations

from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.timemodel._elementwise import least, most
from trainbill.timemodel.records import _Query


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
    rule = _BatchRule.of(catalog, params=params, active_params=active_params)
    seqs, raw = rule.sequences(gpus, seq_len)
    batch = float(seqs * seq_len)
    per_gpu, floor, cap = rule.per_gpu, rule.floor, rule.cap
    scale = f" × {rule.sparsity:.3g} (total / active parameters: MoE)" if rule.moe else ""
    bound = " (the floor)" if raw < floor else " (the ceiling)" if raw > cap else ""
    why = (
        f"global batch {batch:,.0f} tokens ({seqs:,} sequences of {seq_len}): "
        f"{per_gpu:,.0f} tokens per GPU × {gpus:,} GPUs{scale} = {raw:,.0f}, held within "
        f"{floor:,.0f}–{cap:,.0f}{bound} "
        f"({catalog.assumption('defaults.model.batch_tokens_per_gpu').source}; "
        f"{catalog.assumption(rule.cap_key).source})"
    )
    return batch, why


def default_global_batches(
    catalog: Catalog, *, gpus: Any, params: float, active_params: float | None, seq_len: int
) -> Any:
    """``default_global_batch``'s batches (tokens, float64) over an array of GPU counts (a node
    sweep's), without the words: the same rule, elementwise."""
    seqs, _ = _BatchRule.of(catalog, params=params, active_params=active_params).sequences(
        np.asarray(gpus), seq_len
    )
    return (seqs * seq_len).astype(np.float64)


@record
class _BatchRule:
    """``default_global_batch``'s constants for one model: tokens per GPU, floor, ceiling, and
    the MoE scale (total / active parameters)."""

    per_gpu: float
    floor: float
    cap: float
    cap_key: str
    moe: bool
    sparsity: float

    @classmethod
    def of(cls, catalog: Catalog, *, params: float, active_params: float | None) -> _BatchRule:
        """The rule's constants for a model of ``params`` (``active_params`` for MoE)."""
        moe = active_params is not None and active_params < params
        cap_key = (
            "defaults.model.global_batch_tokens_max_moe"
            if moe
            else "defaults.model.global_batch_tokens_max"
        )
        return cls(
            per_gpu=float(catalog.value("defaults.model.batch_tokens_per_gpu")),
            floor=float(catalog.value("defaults.model.global_batch_tokens")),
            cap=float(catalog.value(cap_key)),
            cap_key=cap_key,
            moe=moe,
            sparsity=params / active_params if moe and active_params else 1.0,
        )

    def sequences(self, gpus: Any, seq_len: int) -> tuple[Any, Any]:
        """(whole sequences per batch, the raw tokens per GPU × GPUs × scale), elementwise
        over an array of GPU counts (int64 sequences)."""
        raw = self.per_gpu * gpus * self.sparsity
        held = most(least(most(raw, self.floor), self.cap), float(seq_len))
        # A batch is a whole number of sequences: the nearest, kept under the ceiling.
        if isinstance(held, np.ndarray):
            seqs: Any = np.maximum(1, np.rint(held / seq_len).astype(np.int64))
            return np.where((seqs > 1) & (seqs * seq_len > self.cap), seqs - 1, seqs), raw
        n = max(1, round(held / seq_len))
        if n > 1 and n * seq_len > self.cap:
            n -= 1
        return n, raw


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
