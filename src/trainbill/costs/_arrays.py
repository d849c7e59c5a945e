"""Branching on amounts that may be arrays (``trainbill.ledger.Amount``).

A driver prices one plan and a whole grid of trials or configurations with the same code, so
a branch such as "is any node on spot?" cannot be a plain ``if s > 0``: for an array it asks
whether *some* element needs the branch, and the branch's arithmetic then gives zero where
it does not apply (a spot line with zero spot nodes costs nothing). For one plan the test
is exactly the scalar one, so the ledger of a plan has the same lines as before.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["some"]


def some(mask: bool | np.bool_ | NDArray[np.bool_]) -> bool:
    """True when the condition holds for one plan, or for at least one element of an array."""
    if isinstance(mask, np.ndarray):
        return bool(mask.any())
    return bool(mask)
