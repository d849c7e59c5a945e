"""The time model's answer for a plan, cached, and the compute record it gives.

``_estimate_time`` remembers recent answers (the planner asks the same question per
orchestrator); it calls the ``estimate_time`` found on the ``trainbill.usage`` package at call
time, so a tool or test that swaps that name in is answered by its own function, never from
the cache of another.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog
from trainbill.errors import MemoryFitError, SpecError
from trainbill.spec import Plan, WhatIf
from trainbill.timemodel import (
    SweptTimes,
    TimeEstimate,
    default_global_batch,
    default_global_batches,
    estimate_sweep,
    estimate_time,
)
from trainbill.timemodel._elementwise import first
from trainbill.usage._defaults import _DAYS_PER_YEAR, _Defaults
from trainbill.usage.records import Compute

if TYPE_CHECKING:
    from trainbill.usage.job import Job


def software_age_years(accel: Accelerator, on: date) -> float | None:
    """Years from the accelerator's launch to ``on``, the run's date (the plan's ``run.date``,
    else ``prices.as_of``, else today): the time model's software-maturity input."""
    if accel.launched is None:
        return None
    return (on - accel.launched).days / _DAYS_PER_YEAR


def fused_attention_on(catalog: Catalog, on: date) -> bool:
    """Whether a run on ``on`` (its software date) has a fused, IO-aware attention kernel:
    not before FlashAttention's release (``time.fused_attention_since``); before it the
    seq × seq scores went through HBM, which the time model charges as unfused attention."""
    return on >= date.fromisoformat(str(catalog.value("time.fused_attention_since")))


def _chips_per_host(catalog: Catalog, d: _Defaults, job: Job) -> int:
    """Chips per VM host of a per-chip (TPU) instance (``defaults.cluster.chips_per_host``), 1
    for an instance billed whole (its node is its host)."""
    if job.instance.billing != "chip":
        return 1
    table = catalog.table("defaults.cluster.chips_per_host") or {}
    chips = int(table.get(job.accelerator.id, 1))
    if chips > 1:
        d.used.append(
            f"defaults.cluster.chips_per_host: {chips} {job.accelerator.id} chips per VM host "
            f"({catalog.assumption('defaults.cluster.chips_per_host').source})"
        )
    return chips


def _compute(
    plan: Plan,
    catalog: Catalog,
    d: _Defaults,
    job: Job,
    measured_mfu: float | None,
    time_scale: float,
) -> tuple[TimeEstimate, Compute]:
    """The time model's answer for the plan, and the training and sync-stall hours it gives."""
    question, batch = _time_question(plan, catalog, d, job, measured_mfu)
    est = _estimate_time(**question)
    return _compute_of(plan, est, batch, time_scale)


def _time_question(
    plan: Plan, catalog: Catalog, d: _Defaults, job: Job, measured_mfu: float | None
) -> tuple[dict[str, Any], float]:
    """The time model's question for the plan (``estimate_time``'s keywords), and the global
    batch it states or the one a team would pick for this cluster: the plan's ``TimeSweep``
    over its one node count (``d`` citing what it used)."""
    sweep = _time_sweep(plan, catalog, job, np.array([job.nodes]), None, measured_mfu)
    d.used.extend(sweep.used(0))
    question = sweep.question(0)
    return question, sweep.batch_at(0)


@record
class TimeSweep:
    """A node sweep's time-model question, kept as arrays: what its node counts share
    (``shared``: ``estimate_time``'s keywords but ``timemodel.NODE_KEYWORDS``) and what
    follows each node count (the batch, which grows with the GPUs, the tokens of a modelled
    step, stated hours), each a plain value where it is one for all, else an array over
    ``nodes``. The words (the batch note, the assumptions cited) are worked out per node
    count only when asked (``question``, ``used``): a sweep shows its first node count's."""

    shared: dict[str, Any]
    nodes: Any
    batch: Any
    tokens: Any
    hours: Any
    #: The assumptions cited before the batch's note (the sequence length's) and
    #: after it (the straggler spread's).
    before: tuple[str, ...]
    after: tuple[str, ...]
    #: Whether the batch is the default one (``timemodel.default_global_batch``, cited).
    defaulted: bool
    #: Hours stated without tokens: one step of the batch is modelled (``_per_step_only``).
    per_step: bool

    def batch_at(self, i: int) -> float:
        """Node count ``i``'s global batch (0 when the plan gives no model size)."""
        return float(_at(self.batch, i))

    def _note(self, i: int) -> tuple[float, str] | None:
        m = self.shared
        if not self.defaulted:
            return None
        gpus = int(self.nodes[i]) * m["instance"].accelerator_count
        return default_global_batch(
            m["catalog"], gpus=gpus, params=m["params"], active_params=m["active_params"],
            seq_len=m["seq_len"],
        )  # fmt: skip

    def question(self, i: int) -> dict[str, Any]:
        """Node count ``i``'s own question, as ``estimate_time`` is asked it alone."""
        noted = self._note(i)
        batch = noted[0] if noted is not None else self.batch_at(i)
        tokens, hours = _at(self.tokens, i), _at(self.hours, i)
        return {
            **self.shared,
            "nodes": int(self.nodes[i]),
            "hours": hours,
            "tokens": batch if self.per_step else tokens,
            "global_batch_tokens": batch or 1.0,
            "batch_note": noted[1] if noted is not None else None,
        }

    def used(self, i: int) -> list[str]:
        """The assumptions node count ``i``'s question cites, in order (``Usage.assumed``)."""
        noted = self._note(i)
        note = [] if noted is None else [f"defaults.model.global_batch_tokens: {noted[1]}"]
        return [*self.before, *note, *self.after]


def _at(x: Any, i: int) -> Any:
    """Element ``i`` of a value over a sweep's node counts (an array), or the value itself."""
    return x[i].item() if isinstance(x, np.ndarray) else x


def _time_sweep(
    plan: Plan,
    catalog: Catalog,
    job: Job,
    nodes: Any,
    hours: Any,
    measured_mfu: float | None,
) -> TimeSweep:
    """The plan's time-model question over the node counts ``nodes`` (an int array), ``hours``
    the plan's stated hours at each (an array, as a node count scales them) or None for the
    plan's own: what does not depend on the node count is read once, the batch (which grows
    with the GPUs) over the array (``timemodel.default_global_batches``)."""
    m = plan.model
    reader = _Defaults(catalog)
    seq_len = int(reader.get(m.seq_len, "defaults.model.seq_len"))
    before = tuple(reader.used)
    reader.used.clear()
    cv = float(reader.get(plan.reliability.straggler_cv, "reliability.straggler_cv"))
    shared: dict[str, Any] = {
        "catalog": catalog,
        "accelerator": job.accelerator,
        "instance": job.instance,
        "precision": m.precision,
        "params": m.params,
        "active_params": m.active_params,
        "seq_len": seq_len,
        "layers": m.layers,
        "d_model": m.d_model,
        "straggler_cv": cv,
        "measured_mfu": measured_mfu,
        "software_age_years": software_age_years(job.accelerator, job.run_date),
        "architecture": m.architecture,
        "attention_share": m.attention_share,
        "fused_attention": fused_attention_on(catalog, job.run_date),
    }
    batch: Any = 0.0
    if m.global_batch_tokens is not None:
        batch = float(m.global_batch_tokens)
    elif m.params:
        # The batch a competent team picks grows with the cluster
        # (timemodel.default_global_batch).
        batch = default_global_batches(
            catalog, gpus=nodes * job.instance.accelerator_count, params=m.params,
            active_params=m.active_params, seq_len=seq_len,
        )  # fmt: skip
    stated = plan.run.hours if hours is None else np.asarray(hours, dtype=np.float64)
    per_step_only = _per_step_only(plan)
    return TimeSweep(
        shared=shared,
        nodes=nodes,
        batch=batch,
        tokens=batch if per_step_only else m.tokens,
        hours=None if per_step_only else stated,
        before=before,
        after=tuple(reader.used),
        defaulted=m.global_batch_tokens is None and bool(m.params),
        per_step=per_step_only,
    )


def _per_step_only(plan: Plan) -> bool:
    """Hours given with a model size but no token count: the time model cannot count steps, but
    the step itself (layout, bytes synced, compute per step) needs only the parameter count and
    the batch, so one step of the batch is modelled and its stall fractions apply to the hours."""
    m = plan.model
    return plan.run.hours is not None and m.params is not None and m.tokens is None


def _compute_of(
    plan: Plan,
    est: TimeEstimate,
    batch: float,
    time_scale: float,
    *,
    hours: float | None = None,
) -> tuple[TimeEstimate, Compute]:
    """The time model's answer as the plan uses it (stated hours, a what-if) and the compute
    record: training and sync-stall hours (elementwise for a node sweep's stacked answer,
    whose ``batch`` and stated ``hours``, else the plan's, may be arrays over its node
    counts)."""
    m = plan.model
    stated = plan.run.hours if hours is None else hours
    if _per_step_only(plan) and stated is not None:
        est = _given_hours_with_step_model(est, stated, batch)
    est = _with_whatif(est, plan.whatif)
    hours = est.compute_hours * time_scale
    return est, Compute(
        params=m.params,
        active_params=m.active_params,
        tokens=m.tokens,
        flops=est.flops,
        hours=hours,
        sync_stall_hours=hours * est.sync_stall_fraction,
    )


def _with_whatif(est: TimeEstimate, whatif: WhatIf) -> TimeEstimate:
    """The time model's answer after a what-if (``Plan.whatif``): a sparse-attention what-if
    removes its share of the hours (modelled hours stay modelled, so the error band still
    applies), and MFU is on the FLOPs actually performed, not the dense model's."""
    if not whatif.time_saving and not whatif.flops_saving and not whatif.notes:
        return est
    return replace(
        est,
        compute_hours=est.compute_hours * (1.0 - whatif.time_saving),
        flops=None if est.flops is None else est.flops * (1.0 - whatif.flops_saving),
        factors=(*est.factors, *(("whatif", note) for note in whatif.notes)),
    )


#: Recent time-model answers (``_estimate_time``), most recent last. Each entry keeps the
#: objects its key names by identity, so an identity cannot be reused while it is cached.
_TIME_CACHE: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = OrderedDict()
#: Room for scalar answers: a scalar 1..512 sweep of one question (the right-sizing table's),
#: asked again per orchestrator, with room to spare.
_TIME_CACHE_SIZE = 2048
#: Recent node sweeps' answers (``SweptTimes``, ``_estimate_sweep``), kept apart: one holds
#: arrays over every node count (about 150 KB at 1..1024), so a count fit for scalar answers
#: would let a long-lived web server hold hundreds of MB.
_SWEEP_CACHE: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = OrderedDict()
#: Room for the sweeps of one search: each instance's question, asked again per orchestrator
#: right after (grid order), needs one; 64 covers every instance of a three-cloud search.
_SWEEP_CACHE_SIZE = 64
_TIME_LOCK = threading.Lock()
_BY_IDENTITY = ("accelerator", "instance")
#: The cache key's last element for an answer without its rendered text (``_estimate_times``).
_UNEXPLAINED = ("explain", False)


def _cache_key(
    fn: Any,
    inputs: dict[str, Any],
    *,
    explained: bool = True,
    names: Sequence[str] | None = None,
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(the objects held by identity, the key): the time function itself (the fit tool swaps in
    one with candidate fit parameters, and must never be answered from another function's
    cache), the catalog and the accelerator/instance records by identity, and every other
    input by value; an answer without its text (``explained=False``) under a key of its own,
    never read by a forecast. ``names``: ``_keyed_names(inputs)``, worked out once for a
    sweep's questions (they share their keywords)."""
    held = (fn, inputs["catalog"], *(inputs[k] for k in _BY_IDENTITY if k in inputs))
    key = (
        *(id(o) for o in held),
        *((k, inputs[k]) for k in (_keyed_names(inputs) if names is None else names)),
        *(() if explained else (_UNEXPLAINED,)),
    )
    return held, key


def _keyed_names(inputs: dict[str, Any]) -> tuple[str, ...]:
    """The keywords a cache key holds by value, in order (all but the catalog and the records
    held by identity)."""
    return tuple(sorted(k for k in inputs if k not in _BY_IDENTITY and k != "catalog"))


def _cached(held: tuple[Any, ...], key: tuple[Any, ...], cache: OrderedDict[Any, Any]) -> Any:
    """The answer ``cache`` remembers under ``key`` (a ``TimeEstimate`` in ``_TIME_CACHE``, a
    sweep's ``SweptTimes`` in ``_SWEEP_CACHE``), or None."""
    with _TIME_LOCK:  # the web app prices plans on several threads
        hit = cache.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], held, strict=True)):
            cache.move_to_end(key)
            return hit[1]
    return None


def _remember(held: tuple[Any, ...], key: tuple[Any, ...], est: TimeEstimate | SweptTimes) -> None:
    """Keep ``est`` in its cache (a sweep's apart), dropping the least recently used past the
    cache's room."""
    cache, room = (
        (_SWEEP_CACHE, _SWEEP_CACHE_SIZE)
        if isinstance(est, SweptTimes)
        else (_TIME_CACHE, _TIME_CACHE_SIZE)
    )
    with _TIME_LOCK:
        cache[key] = (held, est)
        while len(cache) > room:
            cache.popitem(last=False)


def forget_answers() -> None:
    """Empty both caches of time-model answers (scalar and sweeps).

    Why: a benchmark times a search from a cold start, and a test that compares the sweep with
    the scalar path makes each run its own time model.
    """
    with _TIME_LOCK:
        _TIME_CACHE.clear()
        _SWEEP_CACHE.clear()


def _estimate_time(**inputs: Any) -> TimeEstimate:
    """``timemodel.estimate_time``, remembering its recent answers.

    The time model is pure and the costliest step of ``usage_for``; the planner asks it the same
    question for every orchestrator of a cluster (restart time and fees differ, the run's hours
    do not). See ``_cache_key`` for what the key holds.
    """
    import trainbill.usage as package  # loaded: this module is part of it

    # The package's name at call time: the real one or one a tool or test swapped in.
    fn = package.estimate_time
    held, key = _cache_key(fn, inputs)
    hit: TimeEstimate | None = _cached(held, key, _TIME_CACHE)
    if hit is not None:
        return hit
    est = fn(**inputs)
    _remember(held, key, est)
    return est


def _estimate_sweep(sweep: TimeSweep) -> SweptTimes:
    """``timemodel.estimate_sweep`` of a node sweep's question, remembered per sweep.

    Why: the planner asks the same sweep for every orchestrator of an instance (restart time
    and fees differ, the run's hours do not). The key is built once for the sweep (not per
    node count): ``_cache_key`` of the shared question, with the node-dependent arrays by
    value (their bytes), marked as a sweep and as an answer without its text
    (``_UNEXPLAINED``): no forecast (whose keys are a scalar question's) ever reads it.

    A tool or test that swapped in its own ``estimate_time`` is asked once per node count, as
    ``usage_for`` would ask it, and its answers are stacked (``_stacked_answers``).
    """
    import trainbill.usage as package  # loaded: this module is part of it

    fn = package.estimate_time
    if fn is not estimate_time:
        return _stacked_answers(sweep, fn)
    varying = tuple(
        (name, _by_value(getattr(sweep, name))) for name in ("nodes", "batch", "tokens", "hours")
    )
    held, key = _cache_key(fn, sweep.shared, explained=False)
    key = (*key, _SWEPT, *varying)
    hit: SweptTimes | None = _cached(held, key, _SWEEP_CACHE)
    if hit is not None:
        return hit
    swept = estimate_sweep(
        **sweep.shared,
        nodes=sweep.nodes,
        global_batch_tokens=sweep.batch if isinstance(sweep.batch, np.ndarray) else (
            sweep.batch or 1.0),
        tokens=sweep.tokens,
        hours=sweep.hours,
    )  # fmt: skip
    _remember(held, key, swept)
    return swept


#: The cache key's element that marks a sweep's answer (``_estimate_sweep``).
_SWEPT = ("sweep", True)


def _by_value(x: Any) -> Any:
    """A cache key's part for a value over a sweep's node counts: an array by its dtype,
    shape and bytes, anything else itself."""
    if isinstance(x, np.ndarray):
        return (x.dtype.str, x.shape, x.tobytes())
    return x


def _stacked_answers(sweep: TimeSweep, fn: Any) -> SweptTimes:
    """A swapped-in time function's answers, asked per node count, as a ``SweptTimes``
    (numbers stacked as ``estimate_sweep`` gives them: (M,) arrays where they differ)."""
    answers: list[tuple[int, TimeEstimate]] = []
    errors: dict[int, MemoryFitError | SpecError] = {}
    for i in range(len(sweep.nodes)):
        try:
            answers.append((i, fn(**sweep.question(i))))
        except (MemoryFitError, SpecError) as exc:
            errors[i] = exc
    fitted = np.array([i for i, _ in answers], dtype=np.intp)
    est = _stack([a for _, a in answers]) if answers else None
    return SweptTimes(estimate=est, fitted=fitted, failed=tuple(errors), why=errors.__getitem__)


def _stack(records: Sequence[Any]) -> Any:
    """One record whose number fields that differ between ``records`` are (M,) arrays (nested
    records likewise); text and anything else the first's."""
    head = records[0]
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(head):
        values = [getattr(r, f.name) for r in records]
        v = values[0]
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            changes[f.name] = _stack(values)
        elif isinstance(v, (int, float)) and any(x != v for x in values):
            changes[f.name] = np.array(values)
    return dataclasses.replace(head, **changes) if changes else head


#: Time-model factors that count a whole run's FLOPs or hours: meaningless for a single modelled
#: step, so ``_given_hours_with_step_model`` replaces them with the plan's hours.
_RUN_TOTAL_FACTORS = frozenset({"flops", "compute", "hours"})


def _given_hours_with_step_model(
    step: TimeEstimate, hours: float, batch_tokens: float
) -> TimeEstimate:
    """The plan's hours of pure training, stalled by the fractions of one modelled step.

    ``step`` is the time model run on exactly one global batch: its layout holds the per-step
    seconds of compute, data-parallel sync, tensor-parallel traffic and pipeline bubble, whose
    ratios do not depend on how many steps the run takes. Without a token count there is no
    FLOP total, so FLOPs and MFU stay unknown rather than being made up from one step.
    """
    lay = step.layout
    assert lay is not None  # a model size was given, so the time model chose a layout
    if not step.factors:  # an answer without its text (a node sweep's): none to reword
        return replace(step, compute_hours=hours, flops=None, base_mfu=None, hours_given=True)
    # (a sweep's stacked answer carries its first node count's text: its figures are shown)
    shown, busy_s, tokens = first(hours), first(lay.busy_s), first(batch_tokens)
    note = (
        f"{shown:g} h of pure training, as given in the plan; model.tokens not given, so the "
        f"stall fractions below come from one modelled step of {tokens:,.0f} tokens: "
        f"{busy_s:.2f} s of compute and host work, ≈ {shown * 3600.0 / busy_s:,.0f} steps "
        f"in {shown:g} h"
    )
    factors = [(key, text) for key, text in step.factors if key not in _RUN_TOTAL_FACTORS]
    at = next((i for i, (key, _) in enumerate(factors) if key == "communication"), len(factors))
    factors.insert(at, ("hours", note))
    return replace(
        step,
        compute_hours=hours,
        flops=None,
        base_mfu=None,
        factors=tuple(factors),
        hours_given=True,
    )
