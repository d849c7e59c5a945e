"""Catalog: packaged, dated, sourced prices and hardware figures, plus user overlays.

The catalog is data, not code: CSV tables and ``assumptions.toml`` inside the wheel, each row
carrying its source and date, indexed here into frozen rows. Prices are *price points* with an
``effective_from`` date, so history is kept and ``price(..., as_of=...)`` answers "what did this
cost on that day" (p5.48xlarge: $98.32 until the June-2025 cut, $55.04 after).

Overlays (a user's negotiated rates via ``--catalog DIR``/``TRAINBILL_CATALOG``, or the price
cache written by ``trainbill prices update``) are directories holding any of the same CSV files;
they are validated exactly like the packaged data and their rows win over packaged rows with
the same key and date. Loading does no network I/O, ever.

Three modules, by concern: ``rows`` (the frozen records and vocabularies), ``loading`` (files
and overlays into a catalog, every row validated) and ``lookups`` (the ``Catalog`` and its
questions). Everything public is re-exported here: ``from trainbill.catalog import Catalog``.
"""

from __future__ import annotations

from trainbill.catalog.loading import file_sha256, load_catalog, packaged_data_dir
from trainbill.catalog.lookups import Catalog
from trainbill.catalog.rows import (
    OPTIONS,
    PRECISIONS,
    PROVIDERS,
    SCHEMA_VERSION,
    STAND_IN_MARK,
    Accelerator,
    Assumption,
    BillRates,
    Instance,
    PricePoint,
    Provenance,
    SpotAdvisorRow,
)

__all__ = [
    "OPTIONS",
    "PRECISIONS",
    "PROVIDERS",
    "SCHEMA_VERSION",
    "STAND_IN_MARK",
    "Accelerator",
    "Assumption",
    "BillRates",
    "Catalog",
    "Instance",
    "PricePoint",
    "Provenance",
    "SpotAdvisorRow",
    "file_sha256",
    "load_catalog",
    "packaged_data_dir",
]
