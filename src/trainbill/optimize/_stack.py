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
  zero they are. ``groups`` splits the node counts into runs that agree.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from trainbill.catalog import Accelerator, Instance
from trainbill.usage import Usage

#: Fields that only feed rendered text (factors, warnings, cited assumptions): never priced.
_RENDERED = frozenset({"factors", "warnings", "assumed", "whatif_notes", "interval_basis"})

#: Catalog rows: compared by identity (one catalog, one row object per instance/accelerator).
_ROWS = (Instance, Accelerator)

_Path = tuple[str, ...]


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _leaves(obj: object, path: _Path = ()) -> Iterator[tuple[_Path, object]]:
    """(dotted path, value) of every leaf of a usage's record tree (catalog rows are leaves)."""
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        v = getattr(obj, f.name)
        here = (*path, f.name)
        if dataclasses.is_dataclass(v) and not isinstance(v, _ROWS):
            yield from _leaves(v, here)
        else:
            yield here, v


def _shape_of(v: object) -> object:
    """What must agree between stacked usages: a number's sign, anything else's value (a
    catalog row's identity)."""
    if _number(v):
        x = float(v)  # type: ignore[arg-type]
        return "nan" if math.isnan(x) else (x > 0) - (x < 0)
    if isinstance(v, _ROWS):
        return id(v)
    return v


def signature(u: Usage) -> tuple[object, ...]:
    """The usage with its numbers reduced to their signs and its rendered text left out: two
    usages with the same signature price through the same driver branches."""
    return tuple(_shape_of(v) for p, v in _leaves(u) if p[-1] not in _RENDERED)


def groups(usages: Sequence[Usage], *, stackable: bool = True) -> list[list[int]]:
    """Indices of ``usages`` split into groups of one signature, each group in order and the
    groups ordered by their first index. ``stackable=False``: one group per usage (a per-chip
    TPU's hosts are ``ceil(chips / chips_per_host)``, an integer rule that does not take
    arrays)."""
    if not stackable:
        return [[i] for i in range(len(usages))]
    by: dict[tuple[object, ...], list[int]] = {}
    for i, u in enumerate(usages):
        by.setdefault(signature(u), []).append(i)
    return sorted(by.values(), key=lambda g: g[0])


def stack(usages: Sequence[Usage]) -> Usage:
    """One usage whose numbers that differ between ``usages`` are arrays over them (axis 0, shape
    ``(N, 1, 1)``); the usages must share a ``signature`` (``groups``)."""
    first = usages[0]
    if len(usages) == 1:
        return first
    columns = [dict(_leaves(u)) for u in usages]
    varying: dict[_Path, Any] = {}
    for path, v in columns[0].items():
        if not _number(v) or path[-1] in _RENDERED:
            continue
        values = [c[path] for c in columns]
        if any(x != v for x in values):
            varying[path] = np.array(values, dtype=np.float64).reshape(-1, 1, 1)
    stacked: Usage = _replaced(first, varying, ())
    return stacked


def _replaced(obj: Any, varying: dict[_Path, Any], path: _Path) -> Any:
    """``obj`` with the leaves under ``path`` named in ``varying`` replaced (records rebuilt
    only where something below them changed)."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        here = (*path, f.name)
        if here in varying:
            changes[f.name] = varying[here]
            continue
        v = getattr(obj, f.name)
        below = any(p[: len(here)] == here for p in varying)
        if below and dataclasses.is_dataclass(v) and not isinstance(v, _ROWS):
            changes[f.name] = _replaced(v, varying, here)
    return dataclasses.replace(obj, **changes) if changes else obj
