"""The few operations ``usage_for``'s steps and the layout search's inputs need to run over a
node sweep's arrays too.

``usage_over_nodes`` runs the very steps ``usage_for`` runs, once, on arrays over node counts
(ARCHITECTURE.md: every quantity may be a NumPy array), and the time model builds a sweep's
layout search inputs once over them (``timemodel.layout._search_space``). Python's ``min``,
``max`` and ``if`` do not work elementwise, so the steps use these instead; for one plan each
is exactly the scalar operation (same value, same type), so a forecast's numbers do not move.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar, cast

import numpy as np

from trainbill.errors import MixedBranchError

T = TypeVar("T")


def least(a: T, b: Any) -> T:
    """``min(a, b)``, elementwise over arrays."""
    x: Any = a
    if isinstance(x, np.ndarray) or isinstance(b, np.ndarray):
        return cast(T, np.minimum(x, b))
    return cast(T, min(x, b))


def most(a: T, b: Any) -> T:
    """``max(a, b)``, elementwise over arrays."""
    x: Any = a
    if isinstance(x, np.ndarray) or isinstance(b, np.ndarray):
        return cast(T, np.maximum(x, b))
    return cast(T, max(x, b))


def where(condition: Any, a: Any, b: Any) -> Any:
    """``a if condition else b``, elementwise over an array of conditions."""
    if isinstance(condition, np.ndarray):
        return np.where(condition, a, b)
    return a if condition else b


def sqrt(a: T) -> T:
    """``math.sqrt``, elementwise over arrays."""
    x: Any = a
    if isinstance(x, np.ndarray):
        return cast(T, np.sqrt(x))
    return cast(T, math.sqrt(x))


def uniform(condition: Any) -> bool:
    """A branch's condition: for one plan the condition itself; over a sweep it must hold for
    every node count or for none (else ``errors.MixedBranchError``)."""
    if not isinstance(condition, np.ndarray):
        return bool(condition)
    if condition.all():
        return True
    if not condition.any():
        return False
    raise MixedBranchError


def first(x: T) -> T:
    """The value text shows: ``x`` for one plan, the first node count's over a sweep (a stacked
    usage is priced, never shown; its text is its first node count's: ``usage.sweep``)."""
    y: Any = x
    if isinstance(y, np.ndarray):
        return cast(T, y.reshape(-1)[0].item())
    return x
