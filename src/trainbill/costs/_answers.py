"""Catalog look-ups the drivers share, answered once per catalog (``_remembered``).

Kept apart from ``_pricing`` (which asks the questions) so that what is remembered, and for how
long, is read in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from trainbill.catalog import Catalog

T = TypeVar("T")

#: Look-ups answered, by (catalog identity, question): the catalog's answer and the catalog
#: (kept, so that its identity is not reused while its answers are).
_ANSWERS: dict[tuple[Any, ...], tuple[Catalog, Any]] = {}
#: Questions kept at most; then all are forgotten at once (a search asks a few dozen).
_ANSWERS_MAX = 4096


def _remembered(catalog: Catalog, question: tuple[Any, ...], look_up: Callable[[], T]) -> T:
    """``look_up()``, answered once per catalog and question.

    Why: every driver asks for the instance's rate and its services' rates (with their cited
    sources) for each usage it prices, about forty look-ups per ``costs.price_arrays`` call,
    and a search prices each instance's grid in several calls (node-count groups, Savings Plan
    terms) with the same answers. A catalog is immutable, so an answer holds as long as the
    catalog does; ``question`` must name everything the look-up reads. A look-up that raises is
    not remembered (it raises again).
    """
    key = (id(catalog), *question)
    hit = _ANSWERS.get(key)
    if hit is not None and hit[0] is catalog:
        answer: T = hit[1]
        return answer
    answer = look_up()
    if len(_ANSWERS) >= _ANSWERS_MAX:
        _ANSWERS.clear()
    _ANSWERS[key] = (catalog, answer)
    return answer
