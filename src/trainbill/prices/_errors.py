"""Errors raised while fetching or caching live prices."""

from __future__ import annotations

from trainbill.errors import CatalogError

__all__ = ["PriceUpdateError"]


class PriceUpdateError(CatalogError):
    """A price update failed (network, throttling, bad payload, missing key).

    Raised *before* the cache is touched, so the previous cache is always intact when the user
    sees this message.
    """
