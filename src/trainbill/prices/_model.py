"""Result of one fetch: new price points plus notes for the user (skipped rows, fallbacks)."""

from __future__ import annotations

import re

from trainbill._record import record
from trainbill.catalog import PricePoint

__all__ = ["ACCELERATOR_FAMILY", "Fetched"]

#: EC2 instance families carrying GPUs or ML accelerators (p4d, p5en, p6-b200, g6e, trn2,
#: inf2, dl1...). Used when a price file lacks a GPU-count column to filter on.
ACCELERATOR_FAMILY = re.compile(r"^(?:p\d|g\d|trn\d|inf\d|dl\d)[a-z0-9-]*\.")


@record
class Fetched:
    """Price points a fetcher produced and what it had to say about the rows it skipped."""

    points: tuple[PricePoint, ...]
    notes: tuple[str, ...] = ()

    def __add__(self, other: Fetched) -> Fetched:
        return Fetched(points=self.points + other.points, notes=self.notes + other.notes)
