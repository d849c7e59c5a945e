"""Spend over time: the ledger spread over calendar days and months from the run date."""

from __future__ import annotations

from datetime import date

import pytest

from conftest import SEED, TODAY
from trainbill.catalog import Catalog, Provenance
from trainbill.forecasting import forecast
from trainbill.ledger import Ledger, LineItem
from trainbill.spec import load_plan
from trainbill.spend import spend_of, spend_over_time


def _line(
    category: str, quantity: float, unit: str, price: float, *, after_run: bool = False
) -> LineItem:
    return LineItem(category=category, item=category, quantity=quantity, unit=unit,
                    unit_price_usd=price, basis="test", source="test",
                    provenance=Provenance.PUBLISHED, after_run=after_run)  # fmt: skip


def test_a_run_across_a_month_boundary_splits_by_hours_in_each_month() -> None:
    """Starts 2025-01-31 00:00 UTC, 60 h: $720 compute + $36 storage = $756 at $12.60/h.

    Jan 31: 24 h × 12.60 = $302.40; Feb 1: 24 h = $302.40; Feb 2: 12 h = $151.20.
    January $302.40, February $302.40 + $151.20 = $453.60.
    """
    ledger = Ledger.of(
        [_line("compute", 72, "cluster-hour", 10.0), _line("storage", 1, "GB-month", 36.0)]
    )
    s = spend_over_time(ledger, start=date(2025, 1, 31), wall_hours=60)
    assert [p.label for p in s.days] == ["2025-01-31", "2025-02-01", "2025-02-02"]
    assert [p.usd for p in s.days] == pytest.approx([302.40, 302.40, 151.20])
    assert [p.run_hours for p in s.days] == pytest.approx([24, 24, 12])
    assert [p.label for p in s.months] == ["2025-01", "2025-02"]
    assert [p.usd for p in s.months] == pytest.approx([302.40, 453.60])
    assert [p.run_hours for p in s.months] == pytest.approx([24, 36])
    assert s.end.isoformat() == "2025-02-02T12:00:00+00:00"


def test_a_bought_commitments_unused_term_accrues_after_the_run() -> None:
    """60 h run from 2025-02-27 (not a leap year): $600 over it at $10/h; the unused commitment,
    30 h × $2 = $60, runs from hour 60 to hour 90.

    Feb 27: 24 h × $10 = $240; Feb 28: $240; Mar 1: 12 h × $10 = $120 + hours 60-72 × $2 = $24
    → $144; Mar 2: hours 72-90 × $2 = $36. February $480, March $180; run hours 48 and 12.
    """
    ledger = Ledger.of(
        [
            _line("compute", 60, "cluster-hour", 10.0),
            _line("discount", 30, "hour", 2.0, after_run=True),
        ]
    )
    s = spend_over_time(ledger, start=date(2025, 2, 27), wall_hours=60)
    assert [p.label for p in s.days] == ["2025-02-27", "2025-02-28", "2025-03-01", "2025-03-02"]
    assert [p.usd for p in s.days] == pytest.approx([240, 240, 144, 36])
    assert [p.run_hours for p in s.days] == pytest.approx([24, 24, 12, 0])
    assert [(p.label, p.usd) for p in s.months] == [
        ("2025-02", pytest.approx(480)),
        ("2025-03", pytest.approx(180)),
    ]
    assert "unused term" in s.basis


def test_only_a_line_marked_after_run_accrues_after_the_run() -> None:
    """A per-hour discount line not marked ``after_run`` accrues with the run like any other:
    24 h from 2025-01-01, $240 compute − 24 h × $1 = $216, all on Jan 1 (no second day)."""
    ledger = Ledger.of(
        [_line("compute", 24, "cluster-hour", 10.0), _line("discount", 24, "hour", -1.0)]
    )
    s = spend_over_time(ledger, start=date(2025, 1, 1), wall_hours=24)
    assert [(p.label, p.usd) for p in s.days] == [("2025-01-01", pytest.approx(216.0))]
    assert "unused term" not in s.basis


def test_the_seed_run_spreads_over_four_days_of_may(catalog: Catalog) -> None:
    """Seed: from prices.as_of 2025-05-01 (no run.date) for its wall-clock W ≈ 81.8 h: three whole
    days of 24/W of the bill each and the rest on May 4; one month holding the whole bill."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    w = fc.usage.wall_hours
    assert 72 < w < 96  # the arithmetic below assumes the run ends on the fourth day
    s = spend_of(fc)
    assert [p.label for p in s.days] == ["2025-05-01", "2025-05-02", "2025-05-03", "2025-05-04"]
    share = [24 / w, 24 / w, 24 / w, (w - 72) / w]
    assert [p.usd for p in s.days] == pytest.approx([fc.total_usd * k for k in share])
    assert [(p.label, p.usd) for p in s.months] == [("2025-05", pytest.approx(fc.total_usd))]
