"""The plan-or-assumption reader every step of ``usage_for`` shares.

Each step falls back on the catalog's ``assumptions.toml`` for what the plan left out and cites
the assumption it used (``Usage.assumed``): one reader, so the citations come out in the order
the steps used them, whichever module the step lives in.
"""

from __future__ import annotations

from typing import Any

from trainbill.catalog import Catalog

_DAYS_PER_YEAR = 365.25  # Julian year: ages in years from day counts


class _Defaults:
    """Reads plan values, falling back to catalog assumptions and recording which were used."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.used: list[str] = []

    def get(self, given: Any, key: str) -> Any:
        if given is not None:
            return given
        a = self.catalog.assumption(key)
        self.used.append(a.cite())
        return a.value
