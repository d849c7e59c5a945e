"""The report's first page: the headline numbers, the quote-to-budget waterfall and what to do."""

from __future__ import annotations

import json
from html import escape

import pytest

from conftest import SEED, TODAY, run_cli
from trainbill.catalog import Catalog
from trainbill.headline import Step
from trainbill.report import build_report, render_html
from trainbill.report.charts import headline_waterfall_svg
from trainbill.report.format import money, money_change, money_precise
from trainbill.spec import load_plan


def test_unit_prices_keep_their_cents() -> None:
    """$0.30 (CloudWatch metric-month), not $0.3; sub-dollar prices keep four significant digits."""
    assert money_precise(0.3) == "$0.30"
    assert money_precise(0.5) == "$0.50"
    assert money_precise(0.045) == "$0.045"
    assert money_precise(0.0004) == "$0.0004"
    assert money_precise(1983.68) == "$1,983.68"


def test_changes_are_signed_whole_dollars() -> None:
    """+$8,642 and -$83,704; a cost under half a dollar reads +<$1, never +$0."""
    assert money_change(8641.93) == "+$8,642"
    assert money_change(-83_704.32) == "-$83,704"
    assert money_change(0.0375) == "+<$1"


def test_headline_waterfall_rows_keep_labels_whole_and_escaped() -> None:
    """Each step is one row with its full label (escaped) and its amount."""
    steps = (
        Step(label="quote", start=0.0, end=100.0, total=True),
        Step(label="<b>work redone after hardware failures</b>", start=100.0, end=130.0),
        Step(label="real bill", start=0.0, end=130.0, total=True),
    )
    svg = headline_waterfall_svg(steps)
    assert "&lt;b&gt;work redone after hardware failures&lt;/b&gt;" in svg
    assert "<b>" not in svg
    assert svg.count("<rect") == 3
    assert "+$30" in svg
    assert "$130" in svg


def test_report_page_one_is_the_headline(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    """Quote, planned, real bill and budget cards come first, then the waterfall and what to do, all
    before the ledger, with the same figures as ``forecast --json``."""
    data = build_report(load_plan(SEED), catalog, today=TODAY, simulate=False, search=False)
    html = render_html(data)
    head = html[html.index('<section class="headline">') : html.index("<h2>Ledger</h2>")]
    code, out, err = run_cli(capsys, "forecast", str(SEED), "--json")
    assert code == 0, err
    d = json.loads(out)
    # 32 × 72 h × (50% × $98.32 + 50% × $25.66) = $142,824.96 → "$142,825"
    for label, usd in (
        ("Quote", 226_529.28),
        ("Planned", 142_824.96),
        ("Real bill (forecast)", d["total_usd"]),
        ("Budget (P90 of simulated runs)", d["budget_usd"]),
    ):
        assert (
            f'<div class="label">{escape(label)}</div><div class="value">{money(usd)}</div>' in head
        )
    # What to do before the chart (issue #42: within two phone screens).
    assert head.index("Budget (P90") < head.index("What to do") < head.index("<svg")
    assert f"{d['hidden_multiplier']:.2f}×</strong> the planned bill" in head
    for a in d["actions"]:
        assert escape(a["title"]) in head
        assert money(a["saving_usd"]) in head
    assert "work redone after hardware failures" in head
    assert "break-after: page" in html  # page 1 ends after what to do when printed
