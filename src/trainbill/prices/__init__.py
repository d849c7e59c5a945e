"""Live prices: fetch from AWS, Azure and GCP into an offline-first, dated price cache.

The packaged catalog always works offline. ``trainbill prices update <cloud>`` adds *dated*
price points to a user cache directory that the catalog loader reads as an overlay, so a
forecast can say which price (and from which day) it used, and an old forecast can be
reproduced with ``as_of``. Nothing here touches the network at import time; the HTTP/boto3
fetchers live in submodules that import ``httpx``/``boto3`` lazily (``trainbill[prices]``).

Public helpers for other commands:

* ``cache_dir()`` -- where updates land (``TRAINBILL_CACHE_DIR`` overrides).
* ``overlays_from_env()`` -- overlay directories to pass to ``load_catalog``.
* ``stale_warning(point, today)`` -- a warning when a price used is older than 90 days.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from trainbill.catalog import PricePoint
from trainbill.prices._errors import PriceUpdateError
from trainbill.prices._view import InstanceQuote, OptionPrice, instance_quote, price_table

__all__ = [
    "CACHE_ENV",
    "CATALOG_ENV",
    "STALE_AFTER_DAYS",
    "InstanceQuote",
    "OptionPrice",
    "PriceUpdateError",
    "cache_dir",
    "instance_quote",
    "overlays_from_env",
    "price_table",
    "stale_warning",
]

#: Environment variable naming the price cache directory itself (tests, CI, shared caches).
CACHE_ENV = "TRAINBILL_CACHE_DIR"
#: Environment variable with user overlay directories, separated by ``os.pathsep``.
CATALOG_ENV = "TRAINBILL_CATALOG"
#: Price points older than this are flagged (issue #7: "warns when prices are older than 90
#: days"). A policy threshold, not a price, so it lives here rather than in the catalog.
STALE_AFTER_DAYS = 90


def cache_dir() -> Path:
    """Directory holding the price cache (an overlay: ``prices.csv`` + ``SCHEMA_VERSION``).

    ``$TRAINBILL_CACHE_DIR`` if set, else ``<platformdirs user cache>/trainbill/prices`` (a
    subdirectory, so other cached files never end up inside a catalog overlay).
    """
    override = os.environ.get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("trainbill")) / "prices"


def overlays_from_env() -> list[Path]:
    """Overlay directories in load order: the price cache (if present), then ``$TRAINBILL_CATALOG``.

    User overlays come last so negotiated rates win over fetched list prices with the same key
    and date. Empty entries in ``TRAINBILL_CATALOG`` are ignored.
    """
    out: list[Path] = []
    cache = cache_dir()
    if cache.is_dir():
        out.append(cache)
    raw = os.environ.get(CATALOG_ENV, "")
    out.extend(Path(part).expanduser() for part in raw.split(os.pathsep) if part.strip())
    return out


def stale_warning(
    price_point: PricePoint, today: date, *, max_age_days: int = STALE_AFTER_DAYS
) -> str | None:
    """A one-line warning when ``price_point`` is more than ``max_age_days`` old, else None.

    Age is counted from ``effective_from`` (the newest evidence we hold for that price); a
    point dated in the future relative to ``today`` is not stale.
    """
    age = (today - price_point.effective_from).days
    if age <= max_age_days:
        return None
    p = price_point
    return (
        f"price of {p.item} ({p.provider} {p.region}, {p.option}) ${p.usd:g}/{p.unit} is "
        f"{age} days old (effective {p.effective_from.isoformat()}, over {max_age_days} days); "
        f"run 'trainbill prices update {p.provider}' or pass --catalog with your current rates"
    )
