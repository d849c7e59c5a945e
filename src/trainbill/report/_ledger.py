"""The report's ledger (every line, by category, its sources; the largest lines on paper; the
CSV/XLSX downloads inline) and its cost over time by month and day.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from html import escape

from trainbill.analysis import Analysis as ReportData
from trainbill.errors import TrainbillError
from trainbill.forecasting import Forecast
from trainbill.headline import Outlook
from trainbill.ledger import CATEGORIES, LineItem
from trainbill.report._parts import _scroll
from trainbill.report.exports import ledger_csv, ledger_xlsx
from trainbill.report.format import (
    category_name,
    hours,
    money,
    money_precise,
    number,
    percent,
    plain_text,
)
from trainbill.spend import Period, SpendOverTime

__all__ = ["DAY_ROWS", "MONTH_ROWS", "PRINT_LEDGER_LINES", "ledger_table"]


#: Lines in the printed "largest lines" table; the rest are in the CSV/XLSX export.
PRINT_LEDGER_LINES = 8


#: Days listed in the by-day table (a long run's days are all in the XLSX export).
DAY_ROWS = 14


#: Months listed (a commitment's whole term is in the XLSX export).
MONTH_ROWS = 12


def _line_row(line: LineItem, share: float, note: int) -> str:
    """Item and Cost first, so a phone shows them without scrolling (issue #42); the source
    is a footnote number into the sources table under the ledger, cited once."""
    return (
        f'<tr><td class="item">{escape(line.item)}</td>'
        f'<td class="num cost">{money(line.cost_usd)}</td>'
        f'<td class="num">{percent(share)}</td>'
        f'<td class="num">{number(line.quantity)}</td><td>{escape(line.unit)}</td>'
        f'<td class="num">{money_precise(line.unit_price_usd)}</td>'
        f'<td class="basis">{escape(line.basis)}</td>'
        f'<td class="num"><a href="#source-{note}">[{note}]</a></td></tr>'
    )


def _sources(fc: Forecast) -> list[str]:
    """Each distinct price source once, in the order the ledger first cites it."""
    return list(dict.fromkeys(plain_text(line.source) for line in fc.ledger.lines))


def ledger_table(data: ReportData) -> str:
    """Every ledger line: item, cost and share first, then quantity × unit price and the basis;
    a heading row per category and its subtotal; the sources cited once, below the table."""
    fc = data.forecast
    by_cat = fc.ledger.by_category()
    pct = fc.percentages()
    total = fc.total_usd
    sources = _sources(fc)
    rows = [
        (
            '<table class="ledger"><thead><tr><th>Item</th><th class="num">Cost</th>'
            '<th class="num">Share</th><th class="num">Quantity</th><th>Unit</th>'
            '<th class="num">Unit price</th><th>Basis</th><th class="num">Source</th></tr>'
            "</thead><tbody>"
        )
    ]
    for cat in CATEGORIES:
        lines = fc.ledger.in_category(cat)
        if not lines:
            continue
        rows.append(f'<tr class="category"><th colspan="8">{escape(category_name(cat))}</th></tr>')
        rows.extend(
            _line_row(
                line,
                100.0 * line.cost_usd / total if total else 0.0,
                sources.index(plain_text(line.source)) + 1,
            )
            for line in lines
        )
        rows.append(
            f'<tr class="subtotal"><td>Subtotal</td><td class="num cost">{money(by_cat[cat])}'
            f'</td><td class="num">{percent(pct[cat])}</td><td colspan="5"></td></tr>'
        )
    rows.append(
        '<tr class="total"><td>Real bill</td>'
        f'<td class="num cost">{money(fc.total_usd)}</td><td class="num">100%</td>'
        '<td colspan="5"></td></tr>'
    )
    rows.append("</tbody></table>")
    return "".join(rows)


def _sources_table(fc: Forecast) -> str:
    """The ledger's sources, each once (a source was a ~60-word cell on every line it priced)."""
    items = "".join(
        f'<li id="source-{i}">{escape(src)}</li>' for i, src in enumerate(_sources(fc), start=1)
    )
    return f'<h3>Sources</h3><ol class="sources note">{items}</ol>'


def _category_table(fc: Forecast) -> str:
    by_cat = fc.ledger.by_category()
    pct = fc.percentages()
    body = "".join(
        f'<tr><td>{escape(category_name(c))}</td><td class="num">{money(by_cat[c])}</td>'
        f'<td class="num">{percent(pct[c])}</td></tr>'
        for c in CATEGORIES
        if fc.ledger.in_category(c)
    )
    return _scroll(
        '<table class="narrow-table"><thead><tr><th>Category</th><th class="num">Cost</th>'
        f'<th class="num">Share</th></tr></thead><tbody>{body}<tr class="total"><td>Real bill</td>'
        f'<td class="num">{money(fc.total_usd)}</td><td class="num">100%</td></tr></tbody></table>'
    )


def _largest_lines(fc: Forecast) -> str:
    """The few lines that make most of the bill, with their arithmetic: what paper has room for."""
    lines = sorted(fc.ledger.lines, key=lambda ln: -abs(ln.cost_usd))
    shown = lines[:PRINT_LEDGER_LINES]
    body = "".join(
        f"<tr><td>{escape(ln.item)}<br>"
        f'<span class="note">{escape(category_name(ln.category))}</span></td>'
        f'<td class="num">{money(ln.cost_usd)}</td><td class="basis">{escape(ln.basis)}</td></tr>'
        for ln in shown
    )
    rest = len(lines) - len(shown)
    more = (
        f'<p class="note">{rest} smaller lines '
        f"({money(sum(ln.cost_usd for ln in lines[len(shown) :]))} together) and every "
        "line's source are in the full ledger: the CSV/XLSX export.</p>"
        if rest > 0
        else '<p class="note">Every line\'s source is in the CSV/XLSX export.</p>'
    )
    return (
        f'<div class="print-only"><h3>The {len(shown)} largest lines</h3><table class="largest">'
        '<thead><tr><th>Item</th><th class="num">Cost</th><th>Basis</th></tr></thead>'
        f"<tbody>{body}</tbody></table>{more}</div>"
    )


def _file_stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "plan"


def _downloads(fc: Forecast, out: Outlook | None) -> str:
    """Links that carry the CSV and XLSX themselves (data: URIs), so the file stays one file."""
    stem = _file_stem(fc.usage.name)
    links = [_data_link(ledger_csv(fc), "text/csv", f"{stem}-ledger.csv", "CSV")]
    try:
        xlsx = ledger_xlsx(fc, out)
    except TrainbillError:
        note = " (XLSX needs the 'report' extra: pip install 'trainbill[report]')"
    else:
        note = ""
        links.append(
            _data_link(
                xlsx,
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                f"{stem}-ledger.xlsx",
                "XLSX (ledger, by month, by day)",
            )
        )
    return (
        '<p class="downloads no-print">Download the full ledger: '
        f"{' · '.join(links)}{escape(note)}.</p>"
    )


def _data_link(data: bytes, mime: str, filename: str, text: str) -> str:
    uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return f'<a href="{uri}" download="{escape(filename)}">{escape(text)}</a>'


def _ledger_section(data: ReportData) -> str:
    fc = data.forecast
    return "".join(
        [
            '<section class="ledger"><div class="head"><h2>Ledger</h2>',
            (
                '<p class="note">Each line: quantity × unit price = cost. <em>Basis</em> says '
                "how the quantity was derived; the number under <em>Source</em> points to the "
                "price point and its date, listed once under the table.</p></div>"
            ),
            _category_table(fc),
            _downloads(fc, data.outlook),
            _largest_lines(fc),
            f'<div class="screen-only">{_scroll(ledger_table(data))}{_sources_table(fc)}</div>',
            "</section>",
        ]
    )


def _period_rows(periods: Sequence[Period], limit: int, unit: str) -> str:
    """The first ``limit`` periods, then one row for the rest (a bought commitment can bill for
    three years after a three-day run); every period is in the XLSX export."""
    rows = "".join(
        f"<tr><td>{escape(p.label)}</td>"
        f'<td class="num">{hours(p.run_hours) if p.run_hours else "-"}</td>'
        f'<td class="num">{money(p.usd)}</td></tr>'
        for p in periods[:limit]
    )
    rest = periods[limit:]
    if rest:
        rest_hours = (
            hours(sum(p.run_hours for p in rest)) if any(p.run_hours for p in rest) else "-"
        )
        rows += (
            f'<tr class="subtotal"><td>{len(rest)} more {unit} to {escape(rest[-1].label)} (XLSX '
            f'export)</td><td class="num">{rest_hours}</td>'
            f'<td class="num">{money(sum(p.usd for p in rest))}</td></tr>'
        )
    return rows


def _spend_section(spend: SpendOverTime) -> str:
    """Spend by calendar month and day, as ``trainbill.spend`` lays the ledger on the calendar."""
    head = (
        '<thead><tr><th>{}</th><th class="num">Run hours</th>'
        '<th class="num">Spend</th></tr></thead>'
    )
    month_rows = _period_rows(spend.months, MONTH_ROWS, "months")
    day_rows = _period_rows(spend.days, DAY_ROWS, "days")
    months = f"<table>{head.format('Month')}<tbody>{month_rows}</tbody></table>"
    days = f"<table>{head.format('Day')}<tbody>{day_rows}</tbody></table>"
    return (
        '<section class="spend"><div class="head"><h2>Cost over time</h2>'
        f'<p class="note">By calendar month and day (UTC): {escape(spend.basis)}.</p></div>'
        '<div class="side-by-side">'
        f"<div>{_scroll(months)}</div><div>{_scroll(days)}</div>"
        "</div></section>"
    )
