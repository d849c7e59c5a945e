"""``usage_over_nodes``: one plan's usage at many node counts, built once over arrays.

Why: the planner prices a node sweep (1..512 node counts per instance and orchestrator) with
the drivers' array arithmetic; one scalar ``usage_for`` per node count was most of a search's
time, and then one record per node count (question, layout, answer, stacked back into
arrays) most of what was left. Here a sweep is ONE time-model question over the array of node
counts (``usage.compute.TimeSweep``), answered as arrays (``timemodel.estimate_sweep``,
remembered per sweep), and ``usage_for``'s own steps (``assemble._assemble``: the checkpoint
writes, reliability rates, checkpoint schedule, interruptions, storage) run once with the
node counts and the time model's numbers as arrays of shape ``(N, 1, 1)`` (node counts
first, then the interval × spot-share grid ``Usage.with_schedule`` spreads them over). No
Python object is built per node count.

The result is split (on the arrays: one sign matrix, not a walk per node count) into groups
whose priced numbers agree in sign at every node count (zero, positive, negative) and whose
other fields are equal:
a driver's branch on a varying field asks ``costs._arrays.some`` whether any element needs its
line, and relies on the line being zero where it does not apply. Text (the time model's
factors and warnings, the usage's warnings and cited assumptions) is the first node count's
of the part built together (a group cut from it carries that text): a stacked usage is priced,
never shown. The time model answers numbers only; with ``explain`` the text of a part's first
node count is asked of the scalar ``estimate_time`` (cached, so a forecast of that cluster
reads it), the only text a sweep carries; the planner, which only prices a sweep, asks none.
A step whose branch goes both ways over the sweep (``_elementwise.MixedBranchError``) is
built again on each half.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog, Instance
from trainbill.errors import MemoryFitError, MixedBranchError, SpecError
from trainbill.spec import Plan
from trainbill.timemodel import TimeEstimate
from trainbill.usage._defaults import _Defaults
from trainbill.usage.assemble import _assemble, _spot_as_bought
from trainbill.usage.compute import (
    TimeSweep,
    _compute_of,
    _estimate_sweep,
    _estimate_time,
    _time_sweep,
)
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
    errors: dict[int, MemoryFitError | SpecError]

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
    plan: Plan,
    catalog: Catalog,
    *,
    job: Job,
    nodes: Sequence[int] | np.ndarray,
    hours: Any = None,
    measured_mfu: float | None = None,
    time_scale: float = 1.0,
    explain: bool = True,
) -> NodeSweep:
    """``usage_for(plan at nodes[i], catalog, job=replace(job, nodes=nodes[i]))`` for every i,
    as ``NodeSweep`` groups (every number equal to the scalar call's, to rounding).

    ``plan`` is the plan at any of the node counts: a node count changes only
    ``cluster.nodes`` and, when the plan states its hours, the hours it scales to (``hours``:
    an array over ``nodes``, or None for the plan's own at every node count). ``job`` is
    resolved once (``resolve_job``: nothing it works out depends on the node count when the
    plan states one). The time model answers the sweep as one question over the array of
    node counts (``timemodel.estimate_sweep``), no record per node count. ``explain=False``:
    the usages carry no time-model text (``factors``, ``warnings`` empty; module doc).
    """
    plan = _spot_as_bought(plan, catalog, job)
    nodes_a = np.asarray(nodes, dtype=np.int64).reshape(-1)
    asked = _time_sweep(plan, catalog, job, nodes_a, hours, measured_mfu)
    swept = _estimate_sweep(asked)
    errors = {i: swept.error(i) for i in swept.failed}
    fitted = np.asarray(swept.fitted, dtype=np.intp)
    if swept.estimate is None or fitted.size == 0:
        return NodeSweep(groups=(), errors=errors)
    sweep = _Sweep(
        plan=plan, catalog=catalog, job=job, asked=asked, estimate=swept.estimate,
        fitted=fitted, stated=None if hours is None else np.asarray(hours).reshape(-1),
        time_scale=time_scale, explain=explain,
    )  # fmt: skip
    groups = sweep.build(np.arange(fitted.size))
    groups.sort(key=lambda g: g[0][0])
    return NodeSweep(groups=tuple(groups), errors=errors)


@dataclasses.dataclass(slots=True)
class _Sweep:
    """What every part of one sweep shares, while it is built and split."""

    plan: Plan
    catalog: Catalog
    job: Job
    asked: TimeSweep
    #: The time model's answer over ``fitted`` ((M,) arrays where the node counts differ).
    estimate: TimeEstimate
    #: The indices (into the sweep's node counts) the time model answered, ascending.
    fitted: np.ndarray
    #: The plan's stated hours at each node count of the sweep, or None (the plan's own).
    stated: np.ndarray | None
    time_scale: float
    #: Whether each part carries its first node count's time-model text (module doc).
    explain: bool

    def build(self, part: np.ndarray) -> list[tuple[tuple[int, ...], Usage]]:
        """The usage over the positions ``part`` (of ``fitted``) split into sign-agreeing
        groups; a part whose steps branch both ways is built again in halves."""
        if part.size == 0:
            return []
        try:
            usage = self._usage(part)
        except MixedBranchError:
            half = part.size // 2
            return self.build(part[:half]) + self.build(part[half:])
        return _by_sign(usage, self.fitted[part].tolist())

    def _usage(self, part: np.ndarray) -> Usage:
        """``usage_for``'s steps after the time model, once over the positions ``part``."""
        rows = self.fitted[part]
        first = int(rows[0])
        est = _spread(self.estimate, part, self.fitted.size)
        if self.explain:  # the text a stacked usage carries: its first node count's (module doc)
            told: TimeEstimate = _estimate_time(**self.asked.question(first))
            est = replace(est, factors=told.factors, warnings=told.warnings)
        # the plan's use of the answers (stated hours, what-ifs), once over the node counts
        est, compute = _compute_of(
            self.plan,
            est,
            _spread_value(self.asked.batch, rows),
            self.time_scale,
            hours=None if self.stated is None else _spread_value(self.stated, rows),
        )
        d = _Defaults(self.catalog)
        d.used.extend(self.job.assumed)
        d.used.extend(self.asked.used(first))
        # (P, 1, 1) node counts where every ``Usage`` number may be an array (its typing: int)
        nodes: Any = _spread_value(self.asked.nodes, rows)
        return _assemble(self.plan, self.catalog, d, replace(self.job, nodes=nodes), est, compute)


def _spread_value(x: Any, rows: np.ndarray) -> Any:
    """A value over the sweep's node counts (an (N,) array, or plain) at ``rows``: a plain
    value where they all agree (a Python number), else an array of shape (P, 1, 1) (node
    counts first, then the interval × spot-share grid ``Usage.with_schedule`` adds)."""
    if not isinstance(x, np.ndarray):
        return x
    part = x[rows]
    if (part == part[0]).all():
        return part[0].item()
    return part.reshape(-1, 1, 1)


def _spread(rec: Any, part: np.ndarray, m: int) -> Any:
    """The time model's answer over the fitted node counts ((M,) arrays, ``SweptTimes``) at
    the positions ``part``, its arrays ``_spread_value``'s: (P, 1, 1), or plain."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(rec):
        v = getattr(rec, f.name)
        if isinstance(v, np.ndarray):
            changes[f.name] = _spread_value(v, part)
        elif _fields(v) is not None:
            inner = _spread(v, part, m)
            if inner is not v:
                changes[f.name] = inner
    return dataclasses.replace(rec, **changes) if changes else rec


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
    """``usage`` (arrays over ``indices``) split into groups whose every priced number has one
    sign (NaN its own) and whose every flag is one value, each group's usage its slice (the
    numbers under ``_UNPRICED`` are cut with it but do not split it)."""
    if len(indices) == 1:
        return [((indices[0],), usage)]
    arrays: dict[tuple[str, ...], np.ndarray] = {}
    _leaves(usage, (), arrays)
    n = len(indices)
    cols = []
    for path, a in arrays.items():
        if path[:3] in _UNPRICED or path[:4] in _UNPRICED:
            continue
        a2 = np.broadcast_to(a, (n, *a.shape[1:])).reshape(n, -1)
        if a2.dtype.kind == "b":
            cols.append(a2.astype(np.int8))
            continue
        a2 = a2.astype(np.float64)
        cols.append(np.where(np.isnan(a2), 2, np.sign(a2)).astype(np.int8))
    key = np.ascontiguousarray(np.concatenate(cols, axis=1) if cols else np.zeros((n, 1), np.int8))
    # (each row's signs as one opaque value: one 1-D unique, not a lexsort over the columns)
    packed = key.view(np.dtype((np.void, key.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    out = []
    for g in np.argsort(first):
        rows = np.flatnonzero(inverse == g)
        out.append((tuple(indices[r] for r in rows), _take(usage, rows, arrays, ())))
    return out


#: The time model's numbers whose sign no step or driver branches on, cut with each group
#: but never splitting one: the layout's memory and its sync before overlap feed only the
#: explanation (which a stacked usage never shows: its text is its first node count's); the
#: step's stall parts (bubble, tensor parallel, exposed data-parallel and MoE traffic) are
#: read by ``usage.checkpoints`` only through their sum (``Layout.step_s``) and by the
#: ``sync_stall`` driver only as a line per part gated by ``some(part > 0)`` whose quantity is
#: proportional to it: zero where the part is. A driver or step that starts branching on one
#: must take it out of here (the grid's tests compare every node count's price with its own
#: scalar ``usage_for``, and ``tests/usage`` each group's signs).
_UNPRICED = frozenset(
    {
        ("time", "layout", "memory"),
        ("time", "layout", "dp_sync_s"),
        ("time", "layout", "bubble_s"),
        ("time", "layout", "tp_s"),
        ("time", "layout", "dp_exposed_s"),
        ("time", "layout", "a2a_exposed_s"),
        ("time", "layout", "a2a_s"),
    }
)


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
