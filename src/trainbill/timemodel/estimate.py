"""``estimate_time``: the named steps (work, kernel efficiency, layout search, explanation)."""

from __future__ import annotations

from typing import Any

from trainbill.catalog import Accelerator, Catalog, Instance
from trainbill.errors import SpecError
from trainbill.memory import MemoryFitError
from trainbill.timemodel.explain import _cluster_notes, _explain, _straggler_note, _warnings
from trainbill.timemodel.fit import FitParams, fit_params
from trainbill.timemodel.kernel import (
    _fp8_usable,
    _Kernel,
    _kernel,
    _measured_kernel,
    _straggler_share,
)
from trainbill.timemodel.layout import (
    _choose_layout,
    _compute_hours,
    _Run,
    _search_space,
    _Space,
)
from trainbill.timemodel.records import _SECONDS_PER_HOUR, Layout, TimeEstimate, _Query
from trainbill.timemodel.work import _Work, _work


def _hours_only(q: _Query, straggler: float, *, explain: bool = True) -> TimeEstimate:
    """A plan with stated hours and no model size: only the stragglers can be modelled
    (elementwise over a sweep's node counts, whose answer has no text: ``explain=False``)."""
    if q.hours is None:  # pragma: no cover - the plan validator requires hours or a model
        msg = "give either run hours or model params and tokens"
        raise MemoryFitError(msg)
    factors = (
        (
            *_cluster_notes(q),
            ("hours", f"{q.hours:g} h of pure training, as given in the plan"),
            ("communication", "model size unknown: gradient sync not modelled"),
            _straggler_note(q, straggler),
        )
        if explain
        else ()
    )
    return TimeEstimate(
        compute_hours=q.hours, comm_stall_fraction=0.0, straggler_fraction=straggler, flops=None,
        peak_tflops_per_gpu=q.peak, base_mfu=None, factors=factors, hours_given=True,
    )  # fmt: skip


def _prepared(q: _Query) -> tuple[_Work, _Kernel, _Kernel, _Space] | None:
    """Work, the modelled and the used kernel efficiency, and the layout search's inputs; None
    when the plan gives no model size (hours only)."""
    wk = _work_and_kernels(q)
    if wk is None:
        return None
    w, modelled, k = wk
    return w, modelled, k, _search_space(q, w, k)


def _work_and_kernels(q: _Query) -> tuple[_Work, _Kernel, _Kernel] | None:
    """The work and the modelled and used kernel efficiency (None without a model size)."""
    w = _work(q)
    if w is None:
        return None
    modelled = _kernel(q, w, fp8=_fp8_usable(q))
    k = modelled
    if q.measured_mfu is not None:
        k = _measured_kernel(modelled, q.measured_mfu, q.peak)
    return w, modelled, k


def _answer(
    q: _Query,
    prep: tuple[_Work, _Kernel, _Kernel, _Space],
    lay: Layout,
    *,
    batch: Any = None,
    explain: bool = True,
) -> TimeEstimate:
    """The estimate for the chosen layout, with its explanation (``explain=False``: its
    numbers only, ``factors`` and ``warnings`` left empty).

    Elementwise: a node sweep (``sweep.estimate_sweep``) gives its question, work, layout and
    ``batch`` as arrays over the node counts that fit (its answer has no text)."""
    w, modelled, k, space = prep
    straggler = _straggler_share(q.straggler_cv, q.gpus)
    run = None
    if explain:  # (what the explanation is rendered from: a sweep's bare answers skip it)
        run = _Run(q=q, work=w, modelled=modelled, kernel=k, space=space, layout=lay,
                   straggler=straggler)  # fmt: skip
    if batch is None:
        batch = space.batch
    hours = _compute_hours(q, w, batch, lay)
    return TimeEstimate(
        compute_hours=hours,
        comm_stall_fraction=lay.stall_s / lay.busy_s,
        straggler_fraction=straggler,
        flops=w.flops,
        peak_tflops_per_gpu=q.peak,
        base_mfu=w.flops / (q.gpus * q.peak * 1e12 * hours * _SECONDS_PER_HOUR),
        factors=_explain(run) if run is not None else (),
        layout=lay,
        warnings=_warnings(run) if run is not None else (),
        hours_given=q.hours is not None,
    )


def _estimate(q: _Query) -> TimeEstimate:
    """The named steps: work, kernel efficiency, layout search, then the explanation."""
    prep = _prepared(q)
    if prep is None:
        return _hours_only(q, _straggler_share(q.straggler_cv, q.gpus))
    return _answer(q, prep, _choose_layout(prep[3], q.accelerator))


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
    q = _query(catalog=catalog, accelerator=accelerator, instance=instance,
               fit=fit, nodes=nodes, precision=precision, hours=hours,
               params=params, active_params=active_params, tokens=tokens,
               global_batch_tokens=global_batch_tokens, seq_len=seq_len, layers=layers,
               d_model=d_model, straggler_cv=straggler_cv, recompute=recompute,
               measured_mfu=measured_mfu, fused_attention=fused_attention,
               software_age_years=software_age_years, batch_note=batch_note,
               architecture=architecture, attention_share=attention_share,
               )  # fmt: skip
    return _estimate(q)


def _query(
    *,
    catalog: Catalog,
    accelerator: Accelerator,
    fit: FitParams | None = None,
    precision: str,
    architecture: str = "transformer",
    attention_share: float | None = None,
    layers: int | None = None,
    d_model: int | None = None,
    recompute: bool | None = None,
    measured_mfu: float | None = None,
    fused_attention: bool = True,
    software_age_years: float | None = None,
    batch_note: str | None = None,
    **rest: Any,
) -> _Query:
    """``estimate_time``'s keywords (its defaults too) as its ``_Query``: the fit resolved, the
    peak read."""
    return _Query(catalog=catalog, accelerator=accelerator, fp=fit or fit_params(catalog),
                  precision=precision, peak=accelerator.peak_tflops(precision),
                  architecture=architecture,
                  attention_share=_attention_share(catalog, architecture, attention_share),
                  layers=layers, d_model=d_model, recompute=recompute, measured_mfu=measured_mfu,
                  fused_attention=fused_attention, software_age_years=software_age_years,
                  batch_note=batch_note, **rest)  # fmt: skip


#: ``estimate_time``'s keywords that a cluster's node count changes (the batch a team picks
#: grows with the GPUs; stated hours scale with them): the rest of a question is shared.
NODE_KEYWORDS = frozenset({"nodes", "global_batch_tokens", "tokens", "hours", "batch_note"})


#: ``NODE_KEYWORDS`` without a default in ``estimate_time`` (``batch_note``'s is None).
_REQUIRED_NODE_KEYWORDS = NODE_KEYWORDS - {"batch_note"}


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
