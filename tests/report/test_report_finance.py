"""Issue #42 in the report: words and layout a finance reader trusts, on the seed plan.

The text checks read the rendered HTML; the phone checks lay it out in Debian's Chromium
(skipped without it or ``playwright``), as ``test_report_browser.py`` does.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from html import escape, unescape
from pathlib import Path
from typing import Any

import pytest

from conftest import SEED, TODAY
from trainbill.catalog import Catalog
from trainbill.report import ReportData, build_report, render_html
from trainbill.report.format import money, plain_text
from trainbill.spec import load_plan

#: Flags, plan field keys and endpoints: an engineer's words.
JARGON = re.compile(
    r"(?<![\w-])--[a-z]|\b(?:run|data|cluster|purchase|model|defaults|prices)\.[a-z_]|/v1/"
)


@pytest.fixture(scope="module")
def seed(catalog: Catalog) -> ReportData:
    return build_report(load_plan(SEED), catalog, today=TODAY)


@pytest.fixture(scope="module")
def html(seed: ReportData) -> str:
    return render_html(seed)


def _text(fragment: str) -> str:
    fragment = re.sub(r"<style>.*?</style>|<svg.*?</svg>", " ", fragment, flags=re.DOTALL)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def test_comparisons_name_both_sides(seed: ReportData, html: str) -> None:
    fc = seed.forecast
    assert fc.planned_usd < fc.total_usd < fc.quote_usd  # the seed: above planned, below quote
    text = _text(html)
    assert "the quote does not show" not in text
    assert f"+${round(fc.total_usd - fc.planned_usd):,} over planned" in text
    assert (
        f"-${round(fc.quote_usd - fc.total_usd):,} under the quote, because half the nodes are spot"
        in text
    )


def test_every_p90_dollar_figure_is_the_budget(seed: ReportData, html: str) -> None:
    """One meaning per number: each "P90 … $X" in the report is the budget (P90 of simulated
    runs); the time model's band is not called P90 (the flagship states its hours: no band)."""
    assert seed.outlook is not None
    assert seed.outlook.budget is not None
    budget = money(seed.outlook.budget.usd)
    text = _text(re.sub(r"<svg.*?</svg>", "", html, flags=re.DOTALL))
    found = re.findall(r"P90(?: of simulated runs\)| bill \(the budget\))?:? (\$[\d,]+)", text)
    assert found
    assert set(found) == {budget}
    assert "P10" not in text


def test_first_page_and_finance_text_carry_no_flag_key_or_endpoint(html: str) -> None:
    """Page 1 (header and headline) and everything above the engineer's details."""
    first = html[html.index("<header>") : html.index("</section>", html.index("headline")) + 10]
    assert "What to do" in first
    assert not JARGON.search(_text(first)), JARGON.search(_text(first))
    body = html[html.index("<header>") : html.index("Engineer&#x27;s details")]
    hit = JARGON.search(_text(body))
    assert hit is None, _text(body)[max(0, hit.start() - 80) : hit.end() + 40]
    # The engineer's details keep the words the body leaves out.
    rest = _text(html[html.index("Engineer&#x27;s details") :])
    assert "--catalog" in rest
    assert "purchase.spot_fraction" in rest


def test_sources_cited_once_and_share_filled(seed: ReportData, html: str) -> None:
    fc = seed.forecast
    table = html[
        html.index('<table class="ledger">') : html.index(
            "</table>", html.index('<table class="ledger">')
        )
    ]
    sources = {line.source for line in fc.ledger.lines}
    assert len(sources) < len(fc.ledger.lines)  # some sources price several lines
    listed = re.findall(r'<li id="source-(\d+)">', html)
    assert len(listed) == len(set(listed)) == len({plain_text(s) for s in sources})
    for line in fc.ledger.lines:
        # The ~60-word provenance is not in the table; a footnote number is, and it is listed.
        assert escape(plain_text(line.source)) not in table
        assert '<li id="source-' in html
    # Share: each line's cost over the total, as a percentage with one decimal.
    first = fc.ledger.lines[0]
    share = f"{100 * first.cost_usd / fc.total_usd:.1f}%"  # 113,264.64 / 163,697.97 = 69.2%
    assert re.search(rf"{re.escape(money(first.cost_usd))}</td><td class=\"num\">{share}<", table)


def test_a_caveat_shared_by_many_pareto_rows_is_said_once(html: str) -> None:
    if '<table class="front">' not in html:
        pytest.skip("no planner in this build")
    start = html.index("<h3>Pareto front")
    front = html[start : html.index("</table>", start)]
    rows = re.findall(r"<tr[^>]*>.*?</tr>", front.split("<tbody>", 1)[1], flags=re.DOTALL)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, flags=re.DOTALL)[-1] for r in rows]
    long_cells = [c for c in cells if len(c) > 60]
    assert len(set(long_cells)) == len(long_cells)  # no long caveat repeated row after row
    assert "SP none" not in front
    assert "ckpt" not in front


CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()),
    None,
)


@pytest.fixture(scope="module")
def phone(html: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    path = tmp_path_factory.mktemp("report") / "r.html"
    path.write_text(html, encoding="utf-8")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = b.new_page(viewport={"width": 390, "height": 844})
            page.goto(path.as_uri())
            yield page
        finally:
            b.close()


@pytest.mark.browser
def test_phone_ledger_costs_and_total_lie_within_the_viewport(phone: Any) -> None:
    cells = phone.locator("table.ledger td.cost")
    assert cells.count() > 20
    for i in range(cells.count()):
        box = cells.nth(i).bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 390, cells.nth(i).text_content()
    total = phone.locator("table.ledger tr.total td.cost")
    assert re.fullmatch(r"\$[\d,]+", total.inner_text())


@pytest.mark.browser
def test_phone_what_to_do_within_two_screens(phone: Any) -> None:
    box = phone.locator("section.headline h2", has_text="What to do").bounding_box()
    assert box is not None
    assert box["y"] + box["height"] <= 2 * 844
