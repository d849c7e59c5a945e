"""How much of the FLOPs attention is at each sequence length, what removing a share of it
saves, and whether the article's "38% faster above 8K tokens" is possible at all."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import forecast
from trainbill.spec import Plan, WhatIf
from trainbill.timemodel import executed_flops, training_flops

__all__ = [
    "SparseRow",
    "SparsityReport",
    "apply_attention_sparsity",
    "attention_share",
    "attention_time_share",
    "sparse_attention",
]


# --- sparse attention ------------------------------------------------------------------------
def attention_share(*, active_params: float, layers: int, d_model: int, seq_len: int) -> float:
    """Attention's share of training FLOPs: 12·L·d·s / (6·N + 12·L·d·s), via ``training_flops``."""
    total = training_flops(
        active_params=active_params, tokens=1.0, layers=layers, d_model=d_model, seq_len=seq_len
    )
    dense = training_flops(active_params=active_params, tokens=1.0)
    return (total - dense) / total


def attention_time_share(
    catalog: Catalog, *, active_params: float, layers: int, d_model: int, seq_len: int
) -> float:
    """Attention's share of the training *time*: of the FLOPs the kernels execute
    (``timemodel.executed_flops``: a fused causal kernel runs half the counted score work), so
    smaller than its share of the counted FLOPs."""
    total = executed_flops(catalog, active_params=active_params, tokens=1.0, layers=layers,
                           d_model=d_model, seq_len=seq_len)  # fmt: skip
    return (total - training_flops(active_params=active_params, tokens=1.0)) / total


@record
class SparseRow:
    """Attention's shares and the savings at one sequence length: of the counted FLOPs (what
    MFU is quoted in) and of the time (what the hours and the bill follow)."""

    seq_len: int
    attention_share: float
    flops_saving: float
    time_share: float
    time_saving: float


@record
class SparsityReport:
    """Savings against sequence length and whether the article's claim can hold."""

    sparsity: float
    rows: tuple[SparseRow, ...]
    plan_seq_len: int
    plan_saving: float
    hours_before: float
    hours_after: float
    usd_before: float
    usd_after: float
    claimed_saving: float
    claimed_min_seq_len: int
    min_seq_len_for_claim: int | None
    claim_possible_at_plan: bool
    notes: tuple[str, ...]


def _min_seq_for(
    target: float, sparsity: float, active: float, layers: int, d_model: int, causal: float
) -> int | None:
    """Smallest s with time_share(s)·S ≥ target, the attention work timed at ``causal`` of its
    count: s = target·6N / ((S − target)·causal·12·L·d); None if S ≤ target."""
    if sparsity <= target:
        return None
    work = causal * 12.0 * layers * d_model
    return math.ceil(target * 6.0 * active / ((sparsity - target) * work))


def sparse_attention(
    plan: Plan,
    catalog: Catalog,
    *,
    sparsity: float,
    seq_lens: Sequence[int] = (2048, 4096, 8192, 16384, 32768, 65536, 131072),
    today: date | None = None,
    source: str | None = None,
) -> SparsityReport:
    """Remove ``sparsity`` of attention FLOPs; savings vs sequence length and the article's claim.

    The hours fall by ``sparsity`` of attention's share of the executed work, timed as the time
    model times it (``timemodel.executed_flops``: a causal kernel already skips half the score
    matrix, so sparsity removes a share of the other half), at the model's average speed, which
    is generous to sparse kernels: the article itself reports numerical and engineering trouble.
    """
    if not 0.0 <= sparsity <= 1.0:
        msg = f"must be between 0 and 1 (got {sparsity})"
        raise SpecError(msg, source="command line", field="--attention-sparsity")
    m = plan.model
    active = m.active_params or m.params
    if active is None or m.layers is None or m.d_model is None:
        msg = "the sparse-attention what-if needs model.params, model.layers and model.d_model"
        raise SpecError(msg, source=source, field="model")
    seq = m.seq_len or int(catalog.value("defaults.model.seq_len"))
    rows = _sparse_rows(catalog, active, m.layers, m.d_model, sparsity, sorted({*seq_lens, seq}))
    row = next(r for r in rows if r.seq_len == seq)
    before = forecast(plan, catalog, today=today)
    after = forecast(_with_sparsity(plan, row, note=""), catalog, today=today)
    claimed = float(catalog.value("whatif.sparse_claimed_speedup"))
    claimed_seq = int(catalog.value("whatif.sparse_claimed_min_seq_len"))
    causal = float(catalog.value("time.causal_attention_work_share"))
    return SparsityReport(
        sparsity=sparsity,
        rows=rows,
        plan_seq_len=seq,
        plan_saving=row.time_saving,
        hours_before=before.usage.compute.hours,
        hours_after=after.usage.compute.hours,
        usd_before=before.total_usd,
        usd_after=after.total_usd,
        claimed_saving=claimed,
        claimed_min_seq_len=claimed_seq,
        min_seq_len_for_claim=_min_seq_for(claimed, sparsity, active, m.layers, m.d_model, causal),
        claim_possible_at_plan=row.time_saving >= claimed,
        notes=_sparse_notes(claimed, claimed_seq),
    )


def _sparse_rows(
    catalog: Catalog,
    active: float,
    layers: int,
    d_model: int,
    sparsity: float,
    seq_lens: Sequence[int],
) -> tuple[SparseRow, ...]:
    """Attention's shares of the FLOPs and of the time, and what ``sparsity`` of it saves, per
    sequence length."""
    rows = []
    for s in seq_lens:
        a = attention_share(active_params=active, layers=layers, d_model=d_model, seq_len=s)
        t = attention_time_share(
            catalog, active_params=active, layers=layers, d_model=d_model, seq_len=s
        )
        rows.append(SparseRow(seq_len=s, attention_share=a, flops_saving=a * sparsity,
                              time_share=t, time_saving=t * sparsity))  # fmt: skip
    return tuple(rows)


def _sparse_notes(claimed: float, claimed_seq: int) -> tuple[str, ...]:
    """The time assumption, and what the article's claim needs."""
    return (
        (
            "time assumed proportional to the executed FLOPs (attention at the model's average "
            "MFU; a causal kernel runs half its counted score work)"
        ),
        (
            f"the article's claim: {claimed:.0%} less training time for sequences over "
            f"{claimed_seq:,} tokens; needs attention > {claimed:.0%} of the time even at 100% "
            "sparsity"
        ),
    )


def apply_attention_sparsity(
    plan: Plan,
    catalog: Catalog,
    sparsity: float,
    *,
    today: date | None = None,
    source: str | None = None,
) -> tuple[Plan, str]:
    """The plan with its pure-training hours cut by the sparse-attention saving, and a note why.

    The saving is worked out at the plan's sequence length (``sparse_attention``) and carried in
    ``plan.whatif`` (``WhatIf``): the forecast cuts the time model's hours by it, so they stay
    modelled hours with their error band (a measured-MFU calibration still sets them before the
    cut), MFU is on the FLOPs performed, and the note becomes a forecast warning.
    """
    rep = sparse_attention(
        plan, catalog, sparsity=sparsity, seq_lens=(), today=today, source=source
    )
    # The attention shares themselves, not saving / sparsity (undefined at sparsity 0).
    row = next(r for r in rep.rows if r.seq_len == rep.plan_seq_len)
    note = (
        f"attention sparsity {sparsity:.0%} at seq len {rep.plan_seq_len:,}: attention is "
        f"{row.attention_share:.1%} of FLOPs and {row.time_share:.1%} of the time (a causal "
        f"kernel skips half its score work), so the pure-training hours fall "
        f"by {rep.plan_saving:.1%}; MFU is on the FLOPs performed"
    )
    return _with_sparsity(plan, row, note=note), note


def _with_sparsity(plan: Plan, row: SparseRow, *, note: str) -> Plan:
    """``plan`` with the saving of ``row`` added to its what-if (``note``: its warning, or "" for
    the report's own before/after comparison, which needs none)."""
    earlier = plan.whatif
    applied = WhatIf(
        # Applied twice, the second cut is of the time and FLOPs the first left.
        time_saving=1.0 - (1.0 - earlier.time_saving) * (1.0 - row.time_saving),
        flops_saving=1.0 - (1.0 - earlier.flops_saving) * (1.0 - row.flops_saving),
        notes=(*earlier.notes, note) if note else earlier.notes,
    )
    return plan.with_whatif(applied)
