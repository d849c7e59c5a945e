"""A plan dated after a price cut whose spot price is from before it is warned (#38 item 6)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog, PricePoint
from trainbill.spec import plan_from_dict
from trainbill.usage import resolve_job

OD_OLD = price("p5.48xlarge", "on_demand", "instance-hour", 100.0)  # from 2024-01-01
OD_CUT = replace(
    price("p5.48xlarge", "on_demand", "instance-hour", 50.0), effective_from=date(2025, 6, 1)
)
SPOT_OLD = price("p5.48xlarge", "spot", "instance-hour", 30.0)  # from 2024-01-01


def _notes(catalog: Catalog, as_of: str, *prices: PricePoint, spot: float = 0.5) -> list[str]:
    plan = {**zero_hidden_plan(), "prices": {"as_of": as_of}, "purchase": {"spot_fraction": spot}}
    job = resolve_job(plan_from_dict(plan), tiny_catalog(catalog, *prices), today=TODAY)
    return [w for w in job.warnings if "before the on-demand price cut" in w]


def test_spot_from_before_a_cut_is_warned(catalog: Catalog) -> None:
    (note,) = _notes(catalog, "2025-08-01", OD_OLD, OD_CUT, SPOT_OLD)
    assert "dated 2024-01-01" in note
    assert "cut of 2025-06-01 ($100 → $50/h)" in note


def test_no_warning_before_the_cut_without_spot_or_with_fresh_spot(catalog: Catalog) -> None:
    assert _notes(catalog, "2025-05-01", OD_OLD, OD_CUT, SPOT_OLD) == []  # plan before the cut
    assert _notes(catalog, "2025-08-01", OD_OLD, OD_CUT, SPOT_OLD, spot=0.0) == []
    fresh = replace(SPOT_OLD, usd=20.0, effective_from=date(2025, 6, 28))
    assert _notes(catalog, "2025-08-01", OD_OLD, OD_CUT, SPOT_OLD, fresh) == []
    # a price rise is not a cut: no warning
    rise = replace(OD_CUT, usd=120.0)
    assert _notes(catalog, "2025-08-01", OD_OLD, rise, SPOT_OLD) == []
