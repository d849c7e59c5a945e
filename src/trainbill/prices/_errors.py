"""Errors raised while fetching or caching live prices (defined in ``trainbill.errors``)."""

from __future__ import annotations

from trainbill.errors import PriceUpdateError

__all__ = ["PriceUpdateError"]
