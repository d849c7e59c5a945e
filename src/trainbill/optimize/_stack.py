"""Usages of one cluster at many node counts, stacked into one usage over a node-count axis.

Why: the drivers' arithmetic broadcasts (ARCHITECTURE.md, "One cost engine"), so a usage whose
node-dependent quantities are arrays along a leading axis is priced for every node count by one
``costs.price_arrays`` call instead of one per node count. Each node count's usage is still the
real ``usage_for`` (time model, checkpoint stall, interruption rates): stacking changes how many
times the drivers run, never what they compute.

What may differ between the stacked usages, and how:

* numbers (``nodes``, hours, counts, the time model's per-step seconds, ...) become float64
  arrays of shape ``(N, 1, 1)`` (node counts first, then the interval × spot-share grid that
  ``Usage.with_schedule`` spreads them over); a number equal at every node count stays a scalar;
* text the drivers only render (``_RENDERED``: the time model's factors and warnings, the usage's
  warnings and cited assumptions) is the first node count's: a stacked usage is priced, never
  shown (a ledger's ``basis`` is rendered for one plan only);
* everything else (strings, booleans, dates, catalog rows, ``None``) must be equal, and so must
  every number's sign (zero, positive, negative): a driver's branch on a varying field asks
  ``costs._arrays.some`` whether any element needs its line, and relies on the line being zero
  where it does not apply, which holds for every element only when they agree on which side of
  zero they are. ``stacked`` splits the node counts into runs that agree.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from trainbill.catalog import Accelerator, Instance
from trainbill.usage import Usage

#: Fields that only feed rendered text (factors, warnings, cited assumptions): never priced.
_RENDERED = frozenset({"factors", "warnings", "assumed", "whatif_notes", "interval_basis"})

#: Catalog rows: compared by identity (one catalog, one row object per instance/accelerator).
_ROWS = (Instance, Accelerator)

_Path = tuple[str, ...]

#: Per record class: its fields as (name, rendered), read once (the walk below runs for every
#: usage of a search, tens of thousands of times).
_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _fields(cls: type) -> tuple[tuple[str, bool], ...] | None:
    """A record class's (field name, rendered) pairs; None for anything that is not a record
    (or is a catalog row, a leaf compared by identity)."""
    if cls in _FIELDS:
        return _FIELDS[cls]
    out = None
    if dataclasses.is_dataclass(cls) and not issubclass(cls, _ROWS):
        out = tuple((f.name, f.name in _RENDERED) for f in dataclasses.fields(cls))
    _FIELDS[cls] = out  # type: ignore[assignment]
    return out


def _flat(obj: object, out: list[object]) -> None:
    """Append the leaves of ``obj``'s record tree to ``out`` in field order: a nested record as
    its class then its leaves (so two trees of different shapes never line up), a rendered
    field as None."""
    get = _FIELDS.get
    for name, rendered in get(type(obj)) or _fields(type(obj)) or ():
        v = getattr(obj, name)
        if rendered:
            out.append(None)
            continue
        cls = type(v)
        sub = get(cls, ()) if cls in _FIELDS else _fields(cls)
        if sub:
            out.append(cls)
            _flat(v, out)
        else:
            out.append(v)


def _paths(obj: object, path: _Path, out: list[_Path]) -> None:
    """The dotted path of each entry ``_flat`` appends, in the same order."""
    for name, rendered in _fields(type(obj)) or ():
        v = getattr(obj, name)
        here = (*path, name)
        out.append(here)
        if not rendered and _fields(type(v)) is not None:
            _paths(v, here, out)


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


#: The number types a usage holds (``type(v) is``: faster than ``isinstance`` and leaves
#: ``bool`` out), the tens of thousands of walks' hot path.
_NUMBERS = frozenset({int, float, np.float64})
_ROW_TYPES = frozenset(_ROWS)


def _shape_of(v: object) -> object:
    """What must agree between stacked usages: a number's sign, anything else's value (a
    catalog row's identity)."""
    if type(v) in _NUMBERS or _number(v):
        x = float(v)  # type: ignore[arg-type]
        return "nan" if math.isnan(x) else (x > 0) - (x < 0)
    if isinstance(v, _ROWS):
        return id(v)
    return v


class _NodeCounts(np.ndarray):
    """Stacked node counts that ``math.ceil`` rounds elementwise.

    ``Usage.hosts`` of a per-chip TPU is ``math.ceil(chips / chips_per_host)``; ``math.ceil``
    asks its argument's ``__ceil__``, and a quotient of this array is this array, so the
    usage's own rule gives every node count's hosts (``np.ceil``: the same integer, as a
    float). Everything else is a plain float64 array.
    """

    def __ceil__(self) -> Any:
        return np.ceil(np.asarray(self))


def stacked(usages: Sequence[Usage]) -> list[tuple[list[int], Usage]]:
    """``usages`` split into groups that price through the same driver branches (numbers of the
    same signs, everything else but rendered text equal), each as (its indices in order, one
    usage stacked over them: ``stack``), ordered by their first index."""
    by: dict[tuple[object, ...], list[int]] = {}
    columns: list[list[object]] = []
    for i, u in enumerate(usages):
        leaves: list[object] = []
        _flat(u, leaves)
        columns.append(leaves)
        # _shape_of inlined for the common leaves (numbers, catalog rows): the hot loop
        key = tuple(
            [
                ((v > 0) - (v < 0) if v == v else "nan")  # type: ignore[operator]  # noqa: PLR0124
                if type(v) in _NUMBERS
                else id(v)
                if type(v) in _ROW_TYPES
                else _shape_of(v)
                for v in leaves
            ]
        )
        by.setdefault(key, []).append(i)
    out = sorted(by.values(), key=lambda g: g[0])
    return [(g, _stack([usages[i] for i in g], [columns[i] for i in g])) for g in out]


def stack(usages: Sequence[Usage]) -> Usage:
    """One usage whose numbers that differ between ``usages`` are arrays over them (axis 0, shape
    ``(N, 1, 1)``); the usages must be one of ``stacked``'s groups."""
    columns: list[list[object]] = []
    for u in usages:
        leaves: list[object] = []
        _flat(u, leaves)
        columns.append(leaves)
    return _stack(usages, columns)


def _stack(usages: Sequence[Usage], columns: list[list[object]]) -> Usage:
    """``stack`` given each usage's ``_flat`` leaves."""
    first = usages[0]
    if len(usages) == 1:
        return first
    paths: list[_Path] = []
    _paths(first, (), paths)
    varying: dict[_Path, Any] = {}
    for k, values in enumerate(zip(*columns, strict=True)):
        v = values[0]
        if (type(v) in _NUMBERS or _number(v)) and any(x != v for x in values):
            varying[paths[k]] = np.array(values, dtype=np.float64).reshape(-1, 1, 1)
    if ("nodes",) in varying:
        varying[("nodes",)] = varying[("nodes",)].view(_NodeCounts)
    out: Usage = _replaced(first, varying, ())
    return out


def _replaced(obj: Any, varying: dict[_Path, Any], path: _Path) -> Any:
    """``obj`` with the leaves under ``path`` named in ``varying`` replaced (records rebuilt
    only where something below them changed)."""
    changes: dict[str, Any] = {}
    for name, _ in _fields(type(obj)) or ():
        here = (*path, name)
        if here in varying:
            changes[name] = varying[here]
        elif any(p[: len(here)] == here for p in varying):
            changes[name] = _replaced(getattr(obj, name), varying, here)
    return dataclasses.replace(obj, **changes) if changes else obj
