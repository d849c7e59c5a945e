"""End to end: Chromium loads the calculator, the node count changes, the total follows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def calculator(browser: tuple[Any, Any], server_url: str) -> Iterator[tuple[Any, Any]]:
    """(page, expect): a fresh page on the calculator, closed afterwards."""
    b, expect = browser
    p = b.new_page()
    try:
        p.goto(server_url + "/")
        yield p, expect
    finally:
        p.close()


def test_changing_nodes_changes_the_total(calculator: tuple[Any, Any]) -> None:
    """32 → 64 nodes at fixed hours: the quote doubles, $226,529 → $453,059 (64 × $98.32 × 72 h)."""
    page, expect = calculator
    # The page's defaults are the seed article's run: 32 × p5.48xlarge, 72 h, prices of 2025-05-01.
    expect(page.locator("#quote")).to_have_text(
        "$226,529", timeout=15_000
    )  # 32 × 98.32 × 72 = 226,529.28
    expect(page.locator("#total")).to_have_text(re.compile(r"^\$[\d,]+$"))
    before = page.text_content("#total") or ""
    page.fill("#nodes", "64")
    expect(page.locator("#quote")).to_have_text(
        "$453,059", timeout=15_000
    )  # 64 × 98.32 × 72 = 453,058.56
    expect(page.locator("#total")).not_to_have_text(before)
    expect(page.locator("#total")).to_have_text(re.compile(r"^\$[\d,]+$"))
    # Two drawings of one chart: the wide and the phone layout (the style sheet shows one).
    expect(page.locator("#chart svg")).to_have_count(2)
    assert page.locator("#ledger tbody tr").count() > 3
    page.fill("#nodes", "0")
    expect(page.locator("#error")).to_contain_text("cluster.nodes", timeout=15_000)


def test_evaluation_cadence_reaches_the_ledger(calculator: tuple[Any, Any]) -> None:
    """Default cadence (100 forward-only steps every 1,000) prices a validation line of
    72 h × 0.1 / 3 = 2.4 cluster-hours; "every 0 steps" removes it and the wall-clock shrinks."""
    page, expect = calculator
    row = page.locator("#ledger tbody tr", has_text="validation passes")
    expect(row).to_have_count(1, timeout=15_000)
    expect(row).to_contain_text("2.4")
    before = page.text_content("#wall") or ""
    page.fill("#evalevery", "0")
    expect(row).to_have_count(0, timeout=15_000)
    expect(page.locator("#wall")).not_to_have_text(before)
    page.fill("#evalsteps", "0")
    page.fill("#evalevery", "500")
    expect(page.locator("#error")).to_contain_text("evaluation.steps", timeout=15_000)
