"""``usage_over_nodes``: one plan's usage at many node counts, built once over arrays.

Why: the planner prices a node sweep (1..512 node counts per instance and orchestrator) with
the drivers' array arithmetic; one scalar ``usage_for`` per node count was most of a search's
time. Here the time model answers every node count with one layout search
(``timemodel.estimate_times``), and ``usage_for``'s own steps (``assemble._assemble``: the
checkpoint writes, reliability rates, checkpoint schedule, interruptions, storage) run once
with the node counts and the time model's numbers as arrays of shape ``(N, 1, 1)`` (node
counts first, then the interval × spot-share grid ``Usage.with_schedule`` spreads them over).

The result is split (on the arrays: one sign matrix, not a walk per node count) into groups
whose numbers agree in sign at every node count (zero, positive, negative) and whose other
fields are equal:
a driver's branch on a varying field asks ``costs._arrays.some`` whether any element needs its
line, and relies on the line being zero where it does not apply. Text (the time model's
factors and warnings, the usage's warnings and cited assumptions) is the first node count's
of the part built together (a group cut from it carries that text): a stacked usage is priced,
never shown. The time model answers numbers only (``estimate_times(explain=False)``); the
text of a part's first node count is asked of the scalar ``estimate_time`` (cached, so a
forecast of that cluster reads it), the only text a sweep carries. A step whose branch goes
both ways over the sweep (``_elementwise.MixedBranchError``) is built again on each half.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog, Instance
from trainbill.errors import MixedBranchError, TrainbillError
from trainbill.spec import Plan
from trainbill.timemodel import TimeEstimate
from trainbill.usage._defaults import _Defaults
from trainbill.usage.assemble import _assemble, _spot_as_bought
from trainbill.usage.compute import _compute_of, _estimate_time, _estimate_times, _time_questions
from trainbill.usage.job import Job
from trainbill.usage.records import Usage

#: Fields that only feed rendered text: the first node count's, never compared or stacked.
_RENDERED = frozenset({"factors", "warnings", "assumed", "whatif_notes", "interval_basis"})

#: Numbers and flags: stacked into arrays where they differ.
_NUMBERS = (int, float, np.number, np.bool_)

#: Leaves compared by identity, never walked (one catalog row per instance or accelerator).
_ROWS = (Instance, Accelerator)


@record
class NodeSweep:
    """A plan's usage at many node counts: ``groups`` of (node-count indices in order, one usage
    whose node-dependent numbers are arrays over them, or plain numbers for a group of one);
    ``errors`` the node counts no layout fits, by index, with the error ``usage_for`` raises."""

    groups: tuple[tuple[tuple[int, ...], Usage], ...]
    errors: dict[int, TrainbillError]

    def only(self, keep: Any) -> tuple[tuple[tuple[int, ...], Usage], ...]:
        """The groups cut to the node counts whose ``keep`` mask (one bool per node count of
        the group, in its order) is True, groups left empty dropped."""
        out = []
        for indices, usage in self.groups:
            mask = np.broadcast_to(np.asarray(keep(usage)).reshape(-1), (len(indices),))
            if mask.all():
                out.append((indices, usage))
            elif mask.any():
                rows = np.flatnonzero(mask)
                out.append((tuple(indices[r] for r in rows), _cut(usage, rows, len(indices))))
        return tuple(out)


def usage_over_nodes(
    plans: Sequence[Plan],
    catalog: Catalog,
    *,
    job: Job,
    nodes: Sequence[int],
    measured_mfu: float | None = None,
    time_scale: float = 1.0,
) -> NodeSweep:
    """``usage_for(plans[i], catalog, job=replace(job, nodes=nodes[i]))`` for every i, as
    ``NodeSweep`` groups (every number equal to the scalar call's, to rounding).

    ``plans`` differ only in what a node count changes (``cluster.nodes``, and the hours a plan
    stating them scales to it); ``job`` is resolved once for them (``resolve_job``: nothing it
    works out depends on the node count when the plans state one).
    """
    plans = [_spot_as_bought(p, catalog, job) for p in plans]
    ds = [_Defaults(catalog) for _ in plans]
    for d in ds:
        d.used.extend(job.assumed)
    asked = _time_questions(plans, catalog, ds, job, nodes, measured_mfu)
    questions = [question for question, _ in asked]
    batches = [batch for _, batch in asked]
    # numbers only, but for the first node count (a part's text is its first's: module doc)
    answers = _estimate_times(questions, explain=[i == 0 for i in range(len(questions))])
    errors = {i: a for i, a in enumerate(answers) if not isinstance(a, TimeEstimate)}
    timed = {i: a for i, a in enumerate(answers) if isinstance(a, TimeEstimate)}
    sweep = _Sweep(
        plans=plans, catalog=catalog, job=job, nodes=nodes, ds=ds, timed=timed,
        batches=batches, time_scale=time_scale,
        explain=lambda i: _explained(answers[i], questions[i]),
    )  # fmt: skip
    groups = sweep.build(list(timed))
    groups.sort(key=lambda g: g[0][0])
    return NodeSweep(groups=tuple(groups), errors=errors)


def _explained(answer: Any, question: dict[str, Any]) -> TimeEstimate:
    """A node count's answer with its rendered text, the scalar ``estimate_time``'s (the
    sweep's answers leave it out: a stacked usage shows only its first node count's)."""
    told: TimeEstimate = _estimate_time(**question)
    est: TimeEstimate = replace(answer, factors=told.factors, warnings=told.warnings)
    return est


@dataclasses.dataclass(slots=True)
class _Sweep:
    """What every part of one sweep shares, while it is built and split."""

    plans: Sequence[Plan]
    catalog: Catalog
    job: Job
    nodes: Sequence[int]
    ds: list[_Defaults]
    #: The time model's answers by node count (before the plan's stated hours and what-ifs).
    timed: dict[int, TimeEstimate]
    #: Each node count's global batch (``_time_questions``).
    batches: Sequence[float]
    time_scale: float
    #: A node count's answer with its rendered text, which ``timed`` lacks.
    explain: Callable[[int], TimeEstimate]
    #: The node counts whose answer in ``timed`` has its text (the first was asked with it).
    told: set[int] = dataclasses.field(default_factory=lambda: {0})

    def build(self, indices: list[int]) -> list[tuple[tuple[int, ...], Usage]]:
        """The usage over ``indices`` split into sign-agreeing groups; a part whose steps
        branch both ways is built again in halves."""
        if not indices:
            return []
        try:
            usage = self._usage(indices)
        except MixedBranchError:
            half = len(indices) // 2
            return self.build(indices[:half]) + self.build(indices[half:])
        return _by_sign(usage, indices)

    def _usage(self, indices: list[int]) -> Usage:
        """``usage_for``'s steps after the time model, once over the node counts ``indices``."""
        first = indices[0]
        if first not in self.told:  # the text a stacked usage carries: its first's
            self.timed[first] = self.explain(first)
            self.told.add(first)
        # the plan's use of the answers (stated hours, what-ifs), once over the node counts
        est, compute = _compute_of(
            self.plans[first],
            _stack([self.timed[i] for i in indices]),
            _stacked_value([self.batches[i] for i in indices]),
            self.time_scale,
            hours=_stacked_value([self.plans[i].run.hours for i in indices]),
        )
        d = _Defaults(self.catalog)
        d.used.extend(self.ds[first].used)
        # (N, 1, 1) node counts where every ``Usage`` number may be an array (its typing says int)
        nodes: Any = np.array([self.nodes[i] for i in indices]).reshape(-1, 1, 1)
        job = replace(self.job, nodes=nodes if len(indices) > 1 else self.nodes[first])
        return _assemble(self.plans[first], self.catalog, d, job, est, compute)


def _fields(obj: object) -> tuple[str, ...] | None:
    """A record's field names; None for a leaf (anything else, or a catalog row)."""
    kind: Any = type(obj)
    return _fields_of(kind)


@functools.cache
def _fields_of(kind: Any) -> tuple[str, ...] | None:
    """``_fields`` by type (a sweep walks the same few record types many times)."""
    if issubclass(kind, _ROWS) or not dataclasses.is_dataclass(kind):
        return None
    return tuple(f.name for f in dataclasses.fields(kind))


def _stack(records: Sequence[Any]) -> Any:
    """One record whose leaves that differ between ``records`` are arrays over them (axis 0,
    shape ``(N, 1, 1)``); rendered text is the first's. A leaf that is no number and differs
    (the sweep's steps would branch on it) is a ``MixedBranchError``."""
    head = records[0]
    if len(records) == 1:
        return head
    changes: dict[str, Any] = {}
    for name in _fields(head) or ():
        if name in _RENDERED:
            continue
        values = [getattr(r, name) for r in records]
        v = values[0]
        if isinstance(v, _NUMBERS):  # (one array for the lot: a sweep stacks hundreds)
            a = np.array(values)
            if a.ndim == 1 and a.dtype.kind in "biuf":  # numbers all, none held as an object
                # (``!=`` as the loop below asks it: one NaN object throughout is no change)
                if (a != a[0]).any() and not all(x is v for x in values):
                    changes[name] = a.reshape(-1, 1, 1)
                continue
        if all(x is v for x in values):
            continue
        if _fields(v) is not None:
            changes[name] = _stack(values)
        elif all(isinstance(x, _NUMBERS) for x in values):
            if any(x != v for x in values):
                changes[name] = np.array(values).reshape(-1, 1, 1)
        elif any(x != v for x in values):
            raise MixedBranchError
    return dataclasses.replace(head, **changes) if changes else head


def _stacked_value(values: Sequence[Any]) -> Any:
    """One number per node count as ``_stack`` stacks a record's leaf: the value itself where
    they are all equal, else an array of shape ``(N, 1, 1)``."""
    v = values[0]
    if all(x == v for x in values):
        return v
    return np.array(values).reshape(-1, 1, 1)


def _leaves(obj: object, path: tuple[str, ...], out: dict[tuple[str, ...], np.ndarray]) -> None:
    """The array leaves of ``obj``'s record tree by dotted path (rendered text skipped)."""
    for name in _fields(obj) or ():
        if name in _RENDERED:
            continue
        v = getattr(obj, name)
        if isinstance(v, np.ndarray):
            out[(*path, name)] = v
        elif _fields(v) is not None:
            _leaves(v, (*path, name), out)


def _by_sign(usage: Usage, indices: list[int]) -> list[tuple[tuple[int, ...], Usage]]:
    """``usage`` (arrays over ``indices``) split into groups whose every number has one sign
    (NaN its own) and whose every flag is one value, each group's usage its slice."""
    if len(indices) == 1:
        return [((indices[0],), usage)]
    arrays: dict[tuple[str, ...], np.ndarray] = {}
    _leaves(usage, (), arrays)
    n = len(indices)
    cols = []
    for a in arrays.values():
        a2 = np.broadcast_to(a, (n, *a.shape[1:])).reshape(n, -1).astype(np.float64)
        sign = np.where(np.isnan(a2), 2.0, np.sign(a2))
        cols.append(sign)
    key = np.concatenate(cols, axis=1) if cols else np.zeros((n, 0))
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    out = []
    for g in np.argsort(first):
        rows = np.flatnonzero(inverse.reshape(-1) == g)
        out.append((tuple(indices[r] for r in rows), _take(usage, rows, arrays, ())))
    return out


def _cut(usage: Usage, rows: np.ndarray, n: int) -> Usage:
    """``usage`` (a group over ``n`` node counts) cut to ``rows``."""
    arrays: dict[tuple[str, ...], np.ndarray] = {}
    _leaves(usage, (), arrays)
    full = {p: np.broadcast_to(a, (n, *a.shape[1:])) for p, a in arrays.items()}
    cut: Usage = _take(usage, rows, full, ())
    return cut


def _take(obj: Any, rows: np.ndarray, arrays: dict[tuple[str, ...], np.ndarray], path: Any) -> Any:
    """``obj`` with each array leaf cut to ``rows`` (a plain number where they all agree, so a
    group of one is a plain usage)."""
    above = {p[:i] for p in arrays for i in range(1, len(p))}
    return _taken(obj, rows, arrays, above, path)


def _taken(
    obj: Any,
    rows: np.ndarray,
    arrays: dict[tuple[str, ...], np.ndarray],
    above: set[tuple[str, ...]],
    path: tuple[str, ...],
) -> Any:
    """``_take`` given the paths of the records that hold an array leaf (``above``)."""
    changes: dict[str, Any] = {}
    for name in _fields(obj) or ():
        here = (*path, name)
        if here in arrays:
            part = arrays[here][rows]
            flat = part.reshape(-1)
            changes[name] = flat[0].item() if (flat == flat[0]).all() else part
        elif here in above:
            changes[name] = _taken(getattr(obj, name), rows, arrays, above, here)
    return dataclasses.replace(obj, **changes) if changes else obj
