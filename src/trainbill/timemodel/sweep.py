"""``estimate_sweep``: one question over an array of node counts, answered as arrays.

Why: the planner prices every node count of 1..512 (per instance); building a question, a
layout record and an answer record per node count, and stacking them back into arrays for
the usage, cost ~90 µs per node count, most of a node-heavy search. Here a node sweep is ONE
question whose node-dependent keywords (``estimate.NODE_KEYWORDS``: the node count, and the
batch, tokens and stated hours that follow it) are arrays: the work, the kernel, the layout
search's inputs (``layout._swept_space``), the search (``layout._layout_grid``), the chosen
layouts (``_LayoutGrid.chosen``) and the answer (``estimate._answer``) are each worked out
once over the arrays, by the very functions the scalar ``estimate_time`` runs on one node
count. No Python object is built per node count, except the error of a node count no layout
fits (built when asked: ``SweptTimes.error``).

The answer carries numbers only (``factors`` and ``warnings`` empty): a stacked answer is
priced, never shown; a caller that shows a node count asks the scalar ``estimate_time``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.errors import SpecError
from trainbill.memory import MemoryFitError
from trainbill.timemodel.estimate import (
    _REQUIRED_NODE_KEYWORDS,
    NODE_KEYWORDS,
    _answer,
    _hours_only,
    _query,
    _work_and_kernels,
    estimate_time,
)
from trainbill.timemodel.kernel import _straggler_share
from trainbill.timemodel.layout import _layout_grid, _no_layout_error, _search_space, _swept_space
from trainbill.timemodel.records import Layout, TimeEstimate, _Query


@record
class SweptTimes:
    """The time model's answer to a node sweep, kept as arrays.

    ``estimate``: one ``TimeEstimate`` over the node counts ``fitted`` (indices into the
    sweep, ascending) whose every number that differs between them (its layout's and memory's
    too) is an array of shape (M,) in their order, and a plain value where all agree; numbers
    only (``factors``, ``warnings`` empty). None when no node count fits. ``failed``: the
    indices no layout fits, in order; ``error(i)`` is the error ``estimate_time`` raises there.
    """

    estimate: TimeEstimate | None
    fitted: Any
    failed: tuple[int, ...]
    #: Builds the error of a failed index (called only for the indices a caller reads).
    why: Callable[[int], MemoryFitError | SpecError]

    def error(self, i: int) -> MemoryFitError | SpecError:
        """The error ``estimate_time`` raises at failed index ``i`` (message and type)."""
        return self.why(i)


def estimate_sweep(
    *,
    nodes: Any,
    global_batch_tokens: Any,
    tokens: Any,
    hours: Any,
    **shared: Any,
) -> SweptTimes:
    """``estimate_time(**shared, nodes=nodes[i], global_batch_tokens=..., tokens=...,
    hours=...)`` for every i at once, as ``SweptTimes``: every number equal to the scalar
    call's to rounding, and the node counts it raises at (with its error) in ``failed``.

    ``nodes``: a 1-D array of node counts; ``global_batch_tokens``, ``tokens`` and ``hours``
    each a plain value shared by all (None for tokens or hours as ``estimate_time`` takes it)
    or an array over the node counts. ``batch_note`` (text only) is not asked.
    """
    n_a = np.asarray(nodes, dtype=np.int64).reshape(-1)
    # (N, 1) arrays where the query's typing says int and float: the elementwise search's axis 0
    q = _query(
        **shared,
        nodes=n_a.reshape(-1, 1),
        global_batch_tokens=_column(global_batch_tokens),
        tokens=_column(tokens),
        hours=_column(hours),
    )
    wk = _work_and_kernels(q)
    if wk is None:  # hours only: no layout to search, every node count answered
        est = _hours_only(q, _straggler_share(q.straggler_cv, q.gpus), explain=False)
        return SweptTimes(estimate=_flat(est), fitted=np.arange(n_a.size), failed=(), why=_no_error)
    w, modelled, k = wk
    s = _swept_space(q, w, k)
    grid = _layout_grid(s, n_a.size)
    found = np.asarray(grid.found)
    fitted = np.flatnonzero(found)
    failed = tuple(np.flatnonzero(~found).tolist())
    cut = grid.failures(failed)  # (what the errors are worded from: the grid is let go)
    where = {i: j for j, i in enumerate(failed)}

    def why(i: int) -> MemoryFitError | SpecError:
        one = _row(q, i)
        w1, _, k1 = _work_and_kernels(one) or wk
        small = cut.too_small_at(where[i])
        return _no_layout_error(_search_space(one, w1, k1), small, q.accelerator)

    if fitted.size == 0:
        return SweptTimes(estimate=None, fitted=fitted, failed=failed, why=why)
    lay: Layout = grid.chosen(fitted)
    batch = _rows(s.batch, fitted)
    prep = (_cut(w, fitted), modelled, k, s)
    est = _answer(_cut(q, fitted), prep, lay, batch=batch, explain=False)
    return SweptTimes(estimate=_flat(est), fitted=fitted, failed=failed, why=why)


def _no_error(i: int) -> MemoryFitError | SpecError:  # pragma: no cover - nothing failed
    msg = f"node count {i} did not fail"
    raise AssertionError(msg)


def _column(x: Any) -> Any:
    """A node-dependent keyword as the query holds it over a sweep: an (N, 1) array, or the
    plain value shared by every node count."""
    if x is None or np.ndim(x) == 0:
        return x
    return np.asarray(x).reshape(-1, 1)


def _rows(x: Any, rows: Any) -> Any:
    """A value over the sweep's node counts ((N, 1) array or plain) at ``rows``: an (M,) array,
    or the plain value."""
    if isinstance(x, np.ndarray):
        return x.reshape(x.shape[0], -1)[rows, 0] if x.shape[0] > 1 else x.reshape(-1)[0].item()
    return x


def _cut(rec: Any, rows: Any) -> Any:
    """A record over the sweep (its (N, 1) array fields) cut to ``rows``: (M,) arrays."""
    changes = {
        f.name: _rows(getattr(rec, f.name), rows)
        for f in dataclasses.fields(rec)
        if isinstance(getattr(rec, f.name), np.ndarray)
    }
    return dataclasses.replace(rec, **changes) if changes else rec


def _row(q: _Query, i: int) -> _Query:
    """Node count ``i``'s own scalar question (the error of a node count no layout fits is
    worked out, and worded, as ``estimate_time`` works it out)."""
    changes = {
        name: _rows(getattr(q, name), np.array([i])) for name in ("nodes", "global_batch_tokens",
                                                                  "tokens", "hours")
    }  # fmt: skip
    plain = {k: v.item() if isinstance(v, np.ndarray) else v for k, v in changes.items()}
    return dataclasses.replace(q, **plain)


def _flat(rec: Any) -> Any:
    """``rec`` with every array field (of its nested records too) that agrees everywhere a
    plain value (``.item()``: a Python int, float or bool) and the others as (M,) arrays."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(rec):
        v = getattr(rec, f.name)
        if isinstance(v, np.ndarray):
            flat = v.reshape(-1)
            changes[f.name] = flat[0].item() if (flat == flat[0]).all() else flat
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            inner = _flat(v)
            if inner is not v:
                changes[f.name] = inner
    return dataclasses.replace(rec, **changes) if changes else rec


def estimate_times(
    questions: Sequence[Mapping[str, Any]], *, explain: bool | Sequence[bool] = True
) -> list[TimeEstimate | MemoryFitError | SpecError]:
    """``estimate_time(**q)`` for each question, as one ``estimate_sweep`` per group of
    questions alike but for ``NODE_KEYWORDS``; a question no layout answers gets the error
    ``estimate_time`` would raise, in its place, not raised.

    Why: a caller holding one question per node count (a test, a tool) gets the sweep's
    numbers as one record per question. The planner asks ``estimate_sweep`` itself and keeps
    the arrays. ``explain`` (True, or per question) adds the scalar ``estimate_time``'s text
    (``factors``, ``warnings``) to the sweep's numbers; False leaves them empty.
    """
    tell = [explain] * len(questions) if isinstance(explain, bool) else list(explain)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, kw in enumerate(questions):
        missing = _REQUIRED_NODE_KEYWORDS - kw.keys()
        if missing:
            msg = f"estimate_time() missing keyword arguments: {', '.join(sorted(missing))}"
            raise TypeError(msg)
        shared = tuple((k, id(kw[k]) if k in _BY_IDENTITY else kw[k]) for k in _shared_names(kw))
        nones = (kw["tokens"] is None, kw["hours"] is None)
        groups.setdefault((*shared, nones), []).append(i)
    out: list[TimeEstimate | MemoryFitError | SpecError | None] = [None] * len(questions)
    for members in groups.values():
        head = questions[members[0]]
        column = {k: [questions[i][k] for i in members] for k in _REQUIRED_NODE_KEYWORDS}
        swept = estimate_sweep(
            **{k: v for k, v in head.items() if k not in NODE_KEYWORDS},
            nodes=column["nodes"],
            global_batch_tokens=column["global_batch_tokens"],
            tokens=None if head["tokens"] is None else column["tokens"],
            hours=None if head["hours"] is None else column["hours"],
        )
        for pos, r in enumerate(np.asarray(swept.fitted).tolist()):
            assert swept.estimate is not None
            i = members[r]
            est: TimeEstimate = _pick(swept.estimate, pos)
            if tell[i]:
                told = estimate_time(**questions[i])
                est = dataclasses.replace(est, factors=told.factors, warnings=told.warnings)
            out[i] = est
        for r in swept.failed:
            out[members[r]] = swept.error(r)
    return [a for a in out if a is not None]


#: Keywords whose value a question's group compares by identity (catalog rows and records).
_BY_IDENTITY = frozenset({"catalog", "accelerator", "instance", "fit"})


def _shared_names(question: Mapping[str, Any]) -> tuple[str, ...]:
    """A question's keywords that group it with others (all but ``NODE_KEYWORDS``), sorted."""
    return tuple(sorted(k for k in question if k not in NODE_KEYWORDS))


def _pick(rec: Any, pos: int) -> Any:
    """One node count's record out of a sweep's (``_flat``): each array field's element
    ``pos`` as a plain Python number (``.item()``), nested records likewise."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(rec):
        v = getattr(rec, f.name)
        if isinstance(v, np.ndarray):
            changes[f.name] = v.reshape(-1)[pos].item()
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            inner = _pick(v, pos)
            if inner is not v:
                changes[f.name] = inner
    return dataclasses.replace(rec, **changes) if changes else rec
