"""Quote audit: the seed article's $1.5M claim is physically impossible."""

from __future__ import annotations

from datetime import date

import pytest

from trainbill.catalog import Catalog
from trainbill.check import audit_quote


def test_article_claim_is_impossible(catalog: Catalog) -> None:
    """$1.5M / (512 × $98.32/8) = 238.4 h; 5.88e23 FLOPs / (512 × 238.4 h × 3600) ≈ 1,338 TFLOP/s > 989."""
    a = audit_quote(catalog=catalog, cost_usd=1.5e6, params=70e9, tokens=1.4e12, gpu="h100", gpus=512, as_of=date(2025, 5, 1))
    hours = 1.5e6 / (512 * 98.32 / 8)
    implied = 6 * 70e9 * 1.4e12 / (512 * hours * 3600) / 1e12
    assert a.hours == pytest.approx(hours)
    assert a.implied_tflops_per_gpu == pytest.approx(implied)
    assert 1330 < a.implied_tflops_per_gpu < 1345
    assert a.verdict == "impossible"


def test_generous_quote_is_plausible(catalog: Catalog) -> None:
    """At $5M the same run needs 5.88e23 / (512 × (5e6/(512×12.29)) h × 3600) ≈ 401 TFLOP/s: 41% MFU."""
    a = audit_quote(catalog=catalog, cost_usd=5e6, params=70e9, tokens=1.4e12, gpu="h100", gpus=512, usd_per_gpu_hour=12.29)
    assert a.implied_mfu == pytest.approx(6 * 70e9 * 1.4e12 / (5e6 / 12.29 * 3600) / 989e12)
    assert a.verdict == "plausible"
