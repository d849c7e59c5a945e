"""Stale-price warnings, cache location and overlay discovery."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from trainbill.catalog import PricePoint
from trainbill.prices import cache_dir, overlays_from_env, stale_warning


def _point(effective: date) -> PricePoint:
    return PricePoint(
        provider="aws", region="us-east-1", item="p5.48xlarge", option="on_demand",
        unit="instance-hour", usd=55.04, effective_from=effective, source="test",
    )  # fmt: skip


def test_stale_after_90_days() -> None:
    """A point 91 days old warns (2026-03-02 + 91 days = 2026-06-01); the message names the fix."""
    msg = stale_warning(_point(date(2026, 3, 2)), date(2026, 6, 1))
    assert msg is not None
    assert "91 days old" in msg
    assert "trainbill prices update aws" in msg


def test_not_stale_at_exactly_90_days() -> None:
    """Exactly 90 days (2026-03-03 -> 2026-06-01: 29 + 30 + 31 days) is not stale yet."""
    assert stale_warning(_point(date(2026, 3, 3)), date(2026, 6, 1)) is None


def test_future_point_is_not_stale() -> None:
    """A price effective after 'today' (as_of in the past) is never called stale."""
    assert stale_warning(_point(date(2026, 7, 1)), date(2026, 6, 1)) is None


def test_custom_threshold() -> None:
    """max_age_days is honoured: 10 days old with a 7-day limit warns."""
    assert stale_warning(_point(date(2026, 5, 22)), date(2026, 6, 1), max_age_days=7) is not None


def test_cache_dir_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TRAINBILL_CACHE_DIR names the cache directory itself."""
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"


def test_cache_dir_default_is_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the override the cache is <user cache dir>/prices."""
    import platformdirs

    monkeypatch.delenv("TRAINBILL_CACHE_DIR", raising=False)
    assert cache_dir() == Path(platformdirs.user_cache_dir("trainbill")) / "prices"


def test_overlays_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The existing cache comes first, then TRAINBILL_CATALOG entries in order (empty ones
    dropped)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(cache))
    monkeypatch.setenv(
        "TRAINBILL_CATALOG", os.pathsep.join([str(tmp_path / "a"), "", str(tmp_path / "b")])
    )
    assert overlays_from_env() == [cache, tmp_path / "a", tmp_path / "b"]


def test_overlays_skip_missing_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache directory yet (never updated): only user overlays, or nothing."""
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(tmp_path / "nope"))
    monkeypatch.delenv("TRAINBILL_CATALOG", raising=False)
    assert overlays_from_env() == []


def test_import_is_light() -> None:
    """Importing trainbill.prices pulls in neither httpx nor boto3 (optional extras)."""
    import subprocess
    import sys

    code = "import sys, trainbill.prices; print('httpx' in sys.modules, 'boto3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"
