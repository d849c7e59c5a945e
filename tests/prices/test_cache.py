"""The price cache: dated points, dedupe, schema marker, atomic writes."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from trainbill.catalog import PricePoint, load_catalog
from trainbill.errors import CatalogSchemaError
from trainbill.prices import _cache
from trainbill.prices._cache import read_cache, write_price_points


def _p(usd: float, day: date, item: str = "p5.48xlarge", option: str = "on_demand") -> PricePoint:
    return PricePoint(
        provider="aws", region="us-east-1", item=item, option=option, unit="instance-hour",
        usd=usd, effective_from=day, source=f"test fetch {day}",
    )  # fmt: skip


def test_written_cache_is_a_valid_overlay(tmp_path: Path) -> None:
    """The cache loads as a catalog overlay; its newer point wins for later dates only."""
    write_price_points(tmp_path, [_p(50.0, date(2026, 12, 1))])
    assert (tmp_path / "SCHEMA_VERSION").read_text().strip() == "1"
    cat = load_catalog([tmp_path])
    now = cat.price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=date(2026, 12, 2)
    )
    assert now.usd == 50.0
    before = cat.price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=date(2026, 11, 30)
    )
    assert before.usd == 55.04  # packaged June-2025 point (REFERENCE §4.1)


def test_unchanged_price_keeps_its_date(tmp_path: Path) -> None:
    """Re-fetching the same price adds nothing: history records changes, not runs."""
    write_price_points(tmp_path, [_p(50.0, date(2026, 12, 1))])
    w = write_price_points(tmp_path, [_p(50.0, date(2026, 12, 5))])
    assert w.added == ()
    assert w.unchanged == 1
    assert [p.effective_from for p in read_cache(tmp_path)] == [date(2026, 12, 1)]


def test_changed_price_adds_a_point(tmp_path: Path) -> None:
    """A new price on a later day is a second dated point; both stay in the history."""
    write_price_points(tmp_path, [_p(50.0, date(2026, 12, 1))])
    w = write_price_points(
        tmp_path, [_p(45.0, date(2026, 12, 5)), _p(20.0, date(2026, 12, 5), option="spot")]
    )
    assert len(w.added) == 2
    assert w.total == 3
    assert sorted((p.option, p.usd) for p in read_cache(tmp_path)) == [
        ("on_demand", 45.0), ("on_demand", 50.0), ("spot", 20.0),
    ]  # fmt: skip


def test_failed_write_keeps_previous_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If the rename fails mid-update, the old prices.csv is byte-identical and no temp file
    remains."""
    write_price_points(tmp_path, [_p(50.0, date(2026, 12, 1))])
    before = (tmp_path / "prices.csv").read_bytes()

    def boom(self: Path, target: Path) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(Path, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_price_points(tmp_path, [_p(45.0, date(2026, 12, 5))])
    monkeypatch.undo()
    assert (tmp_path / "prices.csv").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SCHEMA_VERSION", "prices.csv"]


def test_invalid_point_is_rejected_before_writing(tmp_path: Path) -> None:
    """A negative price never reaches the file; the error names the item and the field."""
    with pytest.raises(CatalogSchemaError, match=r"p5\.48xlarge on_demand.*usd"):
        write_price_points(tmp_path, [_p(-1.0, date(2026, 12, 1))])
    assert not (tmp_path / "prices.csv").exists()


def test_corrupt_cache_is_reported_not_overwritten(tmp_path: Path) -> None:
    """A hand-broken cache header fails with the file name; the file is left for the user."""
    (tmp_path / "prices.csv").write_text("provider,usd\naws,1\n")
    with pytest.raises(CatalogSchemaError, match=r"prices\.csv: columns"):
        write_price_points(tmp_path, [_p(50.0, date(2026, 12, 1))])
    assert (tmp_path / "prices.csv").read_text() == "provider,usd\naws,1\n"


def test_atomic_write_temp_names_do_not_look_like_csv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Temporary files end in .tmp, so a crash leftover never trips the loader's *.csv check."""
    seen: list[str] = []
    real = Path.replace

    def spy(self: Path, target: Path) -> Path:
        seen.append(self.name)
        return real(self, target)

    monkeypatch.setattr(Path, "replace", spy)
    _cache.write_atomic(tmp_path / "prices.csv", "x\n")
    assert seen
    assert all(n.endswith(".tmp") and n.startswith(".prices.csv.") for n in seen)
