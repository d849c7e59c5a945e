"""The ledger (``trainbill.ledger``): each line's cost is its own arithmetic, totals add the
lines (discounts negative), categories come back in presentation order, and a driver's
``Charge`` prices arrays elementwise with the same arithmetic as one plan.

The lines are built here with round hand-picked figures (not catalog prices), so a price-data
change cannot move them; each expected total is worked out in its comment.
"""

from __future__ import annotations

import numpy as np
import pytest

from trainbill.catalog import Provenance
from trainbill.ledger import CATEGORIES, Charge, Ledger, LineItem


def _line(category: str, item: str, quantity: float, price: float) -> LineItem:
    return LineItem(
        category=category,
        item=item,
        quantity=quantity,
        unit="hour",
        unit_price_usd=price,
        basis=f"{quantity:g} h (test)",
        source="test figure",
        provenance=Provenance.PUBLISHED,
    )


GPU = _line("compute", "p5.48xlarge", 400.0, 98.32)  # 400 × 98.32 = 39,328.00
FSX = _line("storage", "FSx for Lustre", 2400.0, 0.145)  # 2,400 × 0.145 = 348.00
NAT = _line("networking", "NAT gateway", 100.0, 0.045)  # 100 × 0.045 = 4.50
CREDIT = _line("discount", "Savings Plan", 1.0, -5000.0)  # 1 × −5,000 = −5,000.00
IDLE = _line("monitoring", "custom metrics", 0.0, 0.30)  # nothing bought


def test_line_cost_is_quantity_times_unit_price() -> None:
    assert GPU.cost_usd == pytest.approx(39_328.0)  # 400 × 98.32
    assert FSX.cost_usd == pytest.approx(348.0)  # 2,400 × 0.145


def test_line_as_dict_carries_its_arithmetic_and_focus_categories() -> None:
    d = NAT.as_dict()
    assert d["quantity"] == 100.0
    assert d["unit_price_usd"] == 0.045
    assert d["cost_usd"] == pytest.approx(4.5)  # 100 × 0.045
    assert d["basis"] == "100 h (test)"
    assert d["source"] == "test figure"
    # defaults: FOCUS ServiceCategory / ChargeCategory-style names for a plain compute line
    assert (d["service_category"], d["pricing_category"]) == ("Compute", "Standard")
    # where its price comes from, as a code (the lines here are built as published prices)
    assert (d["provenance"], d["after_run"]) == ("published", False)


def test_unknown_category_is_refused_naming_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match="unknown ledger category 'gpu'") as info:
        _line("gpu", "x", 1.0, 1.0)
    assert "compute" in str(info.value)
    assert "discount" in str(info.value)


def test_of_drops_zero_quantity_lines_and_keeps_order() -> None:
    ledger = Ledger.of([GPU, IDLE, FSX, NAT])
    assert ledger.lines == (GPU, FSX, NAT)


def test_total_adds_every_line_including_negative_discounts() -> None:
    ledger = Ledger.of([GPU, FSX, NAT, CREDIT])
    # 39,328.00 + 348.00 + 4.50 − 5,000.00 = 34,680.50
    assert ledger.total_usd == pytest.approx(34_680.5)


def test_empty_ledger_totals_zero() -> None:
    ledger = Ledger.of([])
    assert ledger.total_usd == 0.0
    assert all(v == 0.0 for v in ledger.by_category().values())


def test_by_category_is_in_presentation_order_with_zeros() -> None:
    second_gpu = _line("compute", "p4d.24xlarge", 10.0, 32.77)  # 10 × 32.77 = 327.70
    totals = Ledger.of([FSX, GPU, second_gpu, CREDIT]).by_category()
    assert tuple(totals) == CATEGORIES
    assert totals["compute"] == pytest.approx(39_655.7)  # 39,328.00 + 327.70
    assert totals["storage"] == pytest.approx(348.0)
    assert totals["discount"] == pytest.approx(-5000.0)
    assert totals["networking"] == 0.0
    # the categories add back up to the total: 39,655.70 + 348.00 − 5,000.00 = 35,003.70
    assert sum(totals.values()) == pytest.approx(35_003.7)


def test_by_category_is_read_only() -> None:
    totals = Ledger.of([GPU]).by_category()
    with pytest.raises(TypeError):
        totals["compute"] = 0.0  # type: ignore[index]


def test_in_category_returns_that_categorys_lines_in_order() -> None:
    second_gpu = _line("compute", "p4d.24xlarge", 10.0, 32.77)
    ledger = Ledger.of([GPU, FSX, second_gpu])
    assert ledger.in_category("compute") == (GPU, second_gpu)
    assert ledger.in_category("failures") == ()


def test_charge_prices_arrays_elementwise() -> None:
    charge = Charge(
        category="compute",
        item="p5.48xlarge",
        quantity=np.array([100.0, 200.0, 400.0]),
        unit="instance-hour",
        unit_price_usd=np.array([98.32, 98.32, 50.0]),
        basis=lambda: "never rendered for arrays",
        source="test figure",
        provenance=Provenance.PUBLISHED,
    )
    # 100 × 98.32 = 9,832; 200 × 98.32 = 19,664; 400 × 50 = 20,000
    np.testing.assert_allclose(charge.cost_usd, [9_832.0, 19_664.0, 20_000.0])


def test_charge_line_renders_the_basis_and_matches_its_cost() -> None:
    calls: list[int] = []

    def basis() -> str:
        calls.append(1)
        return "32 nodes × 12.5 h"

    charge = Charge(
        category="compute",
        item="p5.48xlarge",
        quantity=400.0,  # 32 nodes × 12.5 h
        unit="instance-hour",
        unit_price_usd=98.32,
        basis=basis,
        source="test figure",
        provenance=Provenance.PUBLISHED,
        driver="compute",
    )
    assert calls == []  # the basis is text for one plan only, rendered on demand
    line = charge.line()
    assert calls == [1]
    assert line.basis == "32 nodes × 12.5 h"
    assert line.cost_usd == pytest.approx(39_328.0)  # 400 × 98.32
    assert line.cost_usd == pytest.approx(float(charge.cost_usd))
    assert line.driver == "compute"
