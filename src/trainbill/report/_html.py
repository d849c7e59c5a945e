"""ReportData → one self-contained HTML page (template in package data, SVG charts inline)."""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from html import escape
from importlib import resources
from string import Template

from trainbill import __version__
from trainbill.analysis import Analysis as ReportData
from trainbill.analysis import PlannerSummary, SimulationSummary, SizingPoint
from trainbill.errors import TrainbillError
from trainbill.forecast import BUDGET_LABEL, Forecast, plain_words, versus_planned, versus_quote
from trainbill.headline import Outlook, waterfall
from trainbill.ledger import CATEGORIES, LineItem
from trainbill.optimize import Candidate
from trainbill.report.charts import (
    Marker,
    Series,
    headline_waterfall_svg,
    histogram_svg,
    waterfall_steps,
    waterfall_svg,
    xy_svg,
)
from trainbill.report.exports import ledger_csv, ledger_xlsx
from trainbill.report.format import (
    category_name,
    hours,
    money,
    money_change,
    money_precise,
    number,
    percent,
    plain_text,
)
from trainbill.spend import Period, SpendOverTime, spend_of

__all__ = ["ledger_table", "render_html", "waterfall_chart"]

_UNAVAILABLE = '<p class="unavailable">{}</p>'


def _template() -> Template:
    text = (
        resources.files("trainbill.report")
        .joinpath("templates/report.html")
        .read_text(encoding="utf-8")
    )
    return Template(text)


def _deadline_markers(deadline: float | None) -> list[Marker]:
    """The plan's deadline as a solid line on a wall-clock axis (none without one; the plan
    refuses a deadline of 0)."""
    if not deadline:
        return []
    return [Marker(label=f"deadline {deadline:g} h", value=deadline, color="#8a5a00", dashed=False)]


def _cost_time_chart(series: Sequence[Series], deadline: float | None) -> str:
    """Total cost against wall-clock hours: the planner's and the right-sizing sections' chart."""
    return xy_svg(
        series,
        title="Cost against wall-clock time",
        x_label="wall-clock hours",
        y_label="USD",
        markers=_deadline_markers(deadline),
        x_unit=" h",
        x_fmt=lambda v: f"{v:,.0f} h",
    )


def _card(label: str, value: str, note: str = "") -> str:
    n = f'<div class="note">{escape(note)}</div>' if note else ""
    return (
        f'<div class="card"><div class="label">{escape(label)}</div>'
        f'<div class="value">{escape(value)}</div>{n}</div>'
    )


def waterfall_chart(
    quote_usd: float, by_category: dict[str, float], *, standalone: bool = False
) -> str:
    """The quote-to-bill waterfall SVG (shared by the report and the web API)."""
    return waterfall_svg(waterfall_steps(quote_usd, by_category), standalone=standalone)


def _scroll(table: str) -> str:
    """A table in its own horizontal scroll box, so a wide table never widens the page."""
    return f'<div class="scroll">{table}</div>'


def _actions(out: Outlook | None) -> str:
    actions = out.actions if out is not None else ()
    if not actions:
        return "<p>Nothing that can be bought saves money on this plan.</p>"
    items = "".join(
        f"<li><strong>{escape(a.title)}</strong>: saves <strong>{money(a.saving_usd)}</strong> "
        f'(real bill {money(a.total_usd)}).<br><span class="note">Caveat: '
        f"{escape(plain_words(plain_text(a.caveat)))}</span></li>"
        for a in actions
    )
    return (
        f'<ol class="actions">{items}</ol><p class="note">Each saving is against the plan as '
        "written, one change at a time: they do not add up.</p>"
    )


def headline_section(data: ReportData) -> str:
    """Page 1: quote, planned, real bill and budget; the waterfall between them; what to do.

    Every figure is the library's (``Forecast``, ``trainbill.headline``): this only lays them out.
    The waterfall is drawn twice, wide and narrow; the style sheet shows the one that fits.
    """
    fc = data.forecast
    u = fc.usage
    out = data.outlook
    b = out.budget if out is not None else None
    steps = waterfall(fc, out)
    parts = [
        '<section class="headline"><div class="cards">',
        _card("Quote", money(fc.quote_usd), "on-demand list price × instances × planned hours"),
        _card(
            "Planned",
            money(fc.planned_usd),
            f"at the plan's purchase mix: {money_change(fc.planned_usd - fc.quote_usd)}",
        ),
        # Each comparison names both its sides (issue #42).
        _card(
            "Real bill (forecast)",
            money(fc.total_usd),
            f"{versus_planned(fc)}; {versus_quote(fc)}",
        ),
        _card(
            BUDGET_LABEL[:1].upper() + BUDGET_LABEL[1:],
            money(b.usd) if b is not None else "n/a",
            "9 simulated runs in 10 cost less"
            if b is not None
            else "the plan could not be simulated",
        ),
        "</div>",
        (
            f'<p class="lead">The real bill is <strong>{fc.hidden_multiplier:.2f}×</strong> the '
            "planned bill (hidden costs "
            f"{money(fc.hidden_usd)}) and {fc.multiplier:.2f}× the quote; wall-clock "
            f"{escape(hours(u.wall_hours))}, "
            f"{u.gpu_hours:,.0f} GPU-hours.</p>"
        ),
        # What to do comes before the chart: on a phone it is then within two screens.
        f'<div class="todo"><h2>What to do</h2>{_actions(out)}</div>',
        (
            f'<figure class="waterfall"><div class="wide">{headline_waterfall_svg(steps)}</div>'
            f'<div class="narrow">{headline_waterfall_svg(steps, narrow=True)}</div></figure>'
        ),
        (
            f'<p class="note">Quote: {escape(plain_text(fc.quote_basis))}. Planned: '
            f"{escape(plain_text(fc.planned_basis))}. "
            f"Budget: {escape(plain_text(b.basis)) if b is not None else 'not worked out.'}</p>"
        ),
    ]
    notes = out.notes if out is not None else ()
    if notes:
        said = "; ".join(plain_words(plain_text(n)) for n in notes)
        parts.append(f'<p class="note">Not considered: {escape(said)}.</p>')
    parts.append("</section>")
    return "".join(parts)


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


def _time_table(data: ReportData) -> str:
    u = data.forecast.usage
    rows = [
        ("Pure training", u.compute.hours),
        ("Gradient-sync and straggler stalls", u.compute.sync_stall_hours),
        ("Evaluation (validation passes)", u.evaluation.hours),
        ("Checkpoint write stalls", u.checkpoint.stall_hours),
        (
            f"Failures ({number(u.reliability.failure_events)} expected)",
            u.reliability.failure_lost_hours,
        ),
        (
            f"Spot reclaims ({number(u.reliability.reclaim_events)} expected)",
            u.reliability.reclaim_lost_hours,
        ),
        ("Wall-clock", u.wall_hours),
    ]
    total_cls = ' class="total"'
    body = "".join(
        f"<tr{total_cls if i == len(rows) - 1 else ''}><td>{escape(k)}</td>"
        f'<td class="num">{hours(v)}</td></tr>'
        for i, (k, v) in enumerate(rows)
    )
    return _scroll(
        '<table class="narrow-table"><thead><tr><th>Time</th>'
        f'<th class="num">Hours</th></tr></thead><tbody>{body}</tbody></table>'
    )


def _simulation_section(sim: SimulationSummary | None, note: str, deadline: float | None) -> str:
    if sim is None:
        return _UNAVAILABLE.format(
            escape(note or "Monte Carlo simulation is not available in this build.")
        )
    markers = [
        Marker(label=f"P50 {money(sim.p50_usd)}", value=sim.p50_usd, color="#2c5d8f"),
        Marker(label=f"P90 {money(sim.p90_usd)}", value=sim.p90_usd, color="#c0392b"),
    ]
    parts = [
        '<div class="cards">',
        _card("P50 bill", money(sim.p50_usd), f"{sim.trials:,} trials"),
        _card("P90 bill (the budget)", money(sim.p90_usd), "9 in 10 runs cost less"),
    ]
    if sim.p50_hours is not None and sim.p90_hours is not None:
        parts.append(
            _card("P50 / P90 wall-clock", f"{sim.p50_hours:,.0f} / {sim.p90_hours:,.0f} h")
        )
    if deadline is not None and sim.p_miss_deadline is not None:
        parts.append(
            _card(
                "Chance of missing the deadline",
                percent(100 * sim.p_miss_deadline),
                f"deadline {deadline:g} h",
            )
        )
    parts.append("</div>")
    bills = histogram_svg(
        sim.cost_edges,
        sim.cost_counts,
        title="Simulated bills",
        x_label="total bill (USD)",
        markers=markers,
    )
    parts.append(
        f"<figure>{_chart(bills)}"
        '<figcaption class="caption">Distribution of the simulated bill; dashed lines mark P50 '
        "and P90.</figcaption></figure>"
    )
    if sim.hours_counts:
        hm = [
            Marker(
                label=f"P50 {sim.p50_hours:,.0f} h", value=sim.p50_hours or 0.0, color="#2c5d8f"
            ),
            Marker(
                label=f"P90 {sim.p90_hours:,.0f} h", value=sim.p90_hours or 0.0, color="#c0392b"
            ),
        ]
        hm += _deadline_markers(deadline)
        chart = histogram_svg(sim.hours_edges, sim.hours_counts, title="Simulated wall-clock hours",
                              x_label="wall-clock hours", markers=hm, x_unit=" h")  # fmt: skip
        caption = "Distribution of the wall-clock time"
        caption += (
            f"; the solid line is the {deadline:g} h deadline."
            if deadline is not None
            else "; dashed lines mark P50 and P90."
        )
        parts.append(
            f"<figure>{_chart(chart)}"
            f'<figcaption class="caption">{escape(caption)}</figcaption></figure>'
        )
    if sim.source:
        parts.append(f'<p class="note">Source: {escape(sim.source)}.</p>')
    return "".join(parts)


def _chart(svg: str) -> str:
    """A chart in a box that scrolls sideways on a phone rather than shrinking it unreadably."""
    return f'<div class="chart-box">{svg}</div>'


#: Highlights the plan's own row in a table.
_HL = ' class="subtotal"'
#: Rows of the Pareto table (evenly thinned beyond this, as ``trainbill optimize`` prints it).
_FRONT_ROWS = 15


def _thin(front: tuple[Candidate, ...], rows: int) -> list[Candidate]:
    """At most ``rows`` points, evenly spaced from the fastest to the cheapest."""
    if len(front) <= rows:
        return list(front)
    step = (len(front) - 1) / (rows - 1)
    return [front[round(i * step)] for i in range(rows)]


def _per_hour(v: float | None) -> str:
    return "-" if v is None else money(v)


def _mix(c: Candidate) -> str:
    """The purchase mix in words ("on-demand, no Savings Plan, checkpoint every 2 h, EKS"),
    not config shorthand ("eks, 0% spot, SP none, ckpt 2 h"; issue #42)."""
    spot = (
        "on-demand"
        if c.spot_fraction == 0
        else "all spot"
        if c.spot_fraction >= 1
        else f"{c.spot_fraction:.0%} spot"
    )
    sp = (
        "no Savings Plan"
        if c.savings_plan == "none"
        else f"{c.savings_plan} Savings Plan on {c.savings_plan_coverage:.0%}"
    )
    orch = {"eks": "EKS", "hyperpod": "HyperPod", "ec2": "own VMs", "vm": "own VMs"}.get(
        c.orchestrator, c.orchestrator
    )
    return f"{spot}, {sp}, checkpoint every {c.checkpoint_interval_hours:g} h, {orch}"


#: Pareto rows printed (evenly spaced among those shown on screen).
_PRINT_FRONT_ROWS = 5


def _rightsizing(pl: PlannerSummary, deadline: float | None) -> str:
    rows = pl.rightsizing
    user = pl.user
    if len(rows) < 2:
        return _UNAVAILABLE.format(
            "Right-sizing needs at least two node counts that hold the model."
        )
    cost = Series(name="real bill", points=tuple((float(r.nodes), r.total_usd) for r in rows))
    marks = [Marker(label=f"plan: {user.nodes} nodes", value=float(user.nodes), color="#8a5a00")]
    curve = xy_svg(
        [cost],
        title="Cost by node count",
        x_label="nodes",
        y_label="USD",
        markers=marks,
        x_fmt=lambda v: f"{v:,.0f}",
    )
    body = "".join(
        f'<tr{_HL if r.nodes == user.nodes else ""}><td class="num">{r.nodes:,}</td>'
        f'<td class="num">{r.gpus:,}</td><td class="num">{hours(r.wall_hours)}</td>'
        f'<td class="num">{percent(100 * r.efficiency, 0)}</td>'
        f'<td class="num">{money(r.total_usd)}</td>'
        f'<td class="num">{_per_hour(r.usd_per_hour_saved)}</td>'
        f"<td>{'yes' if r.pays else 'no'}</td>"
        f"<td>{escape(', '.join(_row_notes(r.nodes == user.nodes, r.wall_hours, deadline)))}"
        "</td></tr>"
        for r in rows
    )
    # On paper the table alone: it holds the curve's numbers, and the page is needed elsewhere.
    return (
        f'<figure class="print-hide">{_chart(curve)}<figcaption class="caption">Real bill of '
        f"{escape(pl.rightsizing_mix)} at each "
        "node count; the axis starts at $0.</figcaption></figure>"
        + _scroll(
            '<table><thead><tr><th class="num">Nodes</th><th class="num">GPUs</th>'
            '<th class="num">Wall-clock</th><th class="num">Efficiency</th><th class="num">Real '
            "bill</th>"
            '<th class="num">Extra cost per hour saved</th><th>More nodes pay?</th>'
            "<th>Note</th></tr>"
            f"</thead><tbody>{body}</tbody></table>"
        )
        + '<p class="note">Efficiency: the fewest node-hours of any size over node-hours at '
        "this size (100% = "
        "the size that wastes the least). More nodes pay while cost × time still falls from "
        "the row above.</p>"
    )


def _best_in_deadline(pl: PlannerSummary, deadline: float | None) -> str:
    if deadline is None:
        return ""
    b = pl.best_in_deadline
    if b is None:
        return (
            f'<p class="warning">No configuration searched finishes within the {deadline:g} h '
            "deadline.</p>"
        )
    user = pl.user
    return (
        f"<p>Cheapest within the {deadline:g} h deadline: <strong>{b.nodes:,} × "
        f"{escape(b.instance)}</strong> ({escape(b.provider)} {escape(b.region)}, "
        f"{escape(_mix(b))}): {money(b.total_usd)} in {hours(b.wall_hours)}, against the plan's "
        f"{money(user.total_usd)} in {hours(user.wall_hours)}.</p>"
    ) + "".join(f'<p class="warning">Caveat: {escape(k.text)}</p>' for k in b.caveats)


def _front_table(pl: PlannerSummary, deadline: float | None) -> str:
    rows = _thin(pl.pareto, _FRONT_ROWS)
    printed = {id(c) for c in _thin(tuple(rows), _PRINT_FRONT_ROWS)} | {
        id(c) for c in rows if c.is_user_plan
    }
    # A caveat most rows share (13 spot rows, one sentence) is said once above the table and
    # marked on its rows; the rest stay in the row (issue #42).
    counts: dict[str, int] = {}
    for c in rows:
        for k in dict.fromkeys(k.text for k in c.caveats):
            counts[k] = counts.get(k, 0) + 1
    shared = [t for t, n in counts.items() if n > 1]
    marks = {t: "*" * (i + 1) for i, t in enumerate(shared)}

    def row_caveats(c: Candidate) -> str:
        texts = list(dict.fromkeys(k.text for k in c.caveats))
        own = [escape(plain_words(t)) for t in texts if t not in marks]
        return "<br>".join([*own, *(f"see {marks[t]} above" for t in texts if t in marks)]) or "-"

    above = "".join(f'<p class="note">{marks[t]} {escape(plain_words(t))}</p>' for t in shared)
    body = "".join(
        f"<tr{_row_class(c.is_user_plan, id(c) in printed)}>"
        f'<td>{escape(c.provider)}:{escape(c.instance)}</td><td class="num">{c.nodes:,}</td>'
        f'<td class="num">{c.gpus:,}</td><td class="mix">{escape(_mix(c))}</td>'
        f'<td class="num">{hours(c.wall_hours)}</td><td class="num">{money(c.total_usd)}</td>'
        f"<td>{escape(', '.join(_row_notes(c.is_user_plan, c.wall_hours, deadline)))}</td>"
        f"<td>{row_caveats(c)}</td></tr>"
        for c in rows
    )
    n_print = sum(1 for c in rows if id(c) in printed)
    screen = (
        ""
        if len(pl.pareto) <= len(rows)
        else f" ({len(rows)} of {len(pl.pareto)} points, evenly spaced)"
    )
    paper = f" ({n_print} of {len(pl.pareto)} points, evenly spaced)"
    return _scroll(
        f'<h3>Pareto front<span class="screen-only">{screen}</span>'
        f'<span class="print-only">{paper}</span></h3>{above}<table class="front"><thead><tr>'
        '<th>Cloud:instance</th><th class="num">Nodes</th><th class="num">GPUs</th><th>Mix</th>'
        '<th class="num">Wall-clock</th><th class="num">Real bill</th><th>Note</th>'
        f"<th>Caveats</th></tr></thead><tbody>{body}</tbody></table>"
    ) + (
        '<p class="note">Searched: the plan\'s own cloud and accelerator vendor, instances that '
        "can be bought "
        "(no catalog stand-ins). Caveats say what a row changes beyond its price: another "
        "accelerator "
        "vendor (porting), cloud, older or smaller-memory GPU, or more nodes on spot than the "
        "plan.</p>"
    )


def _row_class(is_plan: bool, printed: bool) -> str:
    classes = (["subtotal"] if is_plan else []) + ([] if printed else ["print-hide"])
    return f' class="{" ".join(classes)}"' if classes else ""


def _planner_section(pl: PlannerSummary, deadline: float | None) -> str:
    """Right-sizing table and Pareto front from ``trainbill.optimize``."""
    user = pl.user
    lifted = (
        f" The plan's {deadline:g} h deadline is lifted for the search and drawn on the chart."
        if deadline is not None
        else ""
    )
    front = Series(
        name="Pareto front",
        points=tuple((c.wall_hours, c.total_usd) for c in pl.pareto),
        color="#c0392b",
    )
    plan_pt = Series(
        name="the plan", points=((user.wall_hours, user.total_usd),), color="#8a5a00", line=False
    )
    chart = _cost_time_chart([front, plan_pt], deadline)
    caption = (
        "The planner's Pareto front over every instance, purchase mix, orchestrator and "
        "checkpoint interval searched: no other configuration is both cheaper and faster than a "
        "point on the red line"
        + (f"; the solid line is the {deadline:g} h deadline." if deadline is not None else ".")
    )
    return "".join(
        [
            (
                '<p class="note">From the planner: '
                f"{pl.evaluated:,} configurations "
                f"priced in {pl.elapsed_s:.1f} s.{escape(lifted)}</p>"
            ),
            _rightsizing(pl, deadline),
            (
                f"<figure>{_chart(chart)}"
                f'<figcaption class="caption">{escape(caption)}</figcaption></figure>'
            ),
            _best_in_deadline(pl, deadline),
            _front_table(pl, deadline),
        ]
    )


def _row_notes(is_plan: bool, wall_hours: float, deadline: float | None) -> list[str]:
    notes = ["the plan"] if is_plan else []
    if deadline is not None and wall_hours > deadline:
        notes.append("misses the deadline")
    return notes


def _sizing_section(data: ReportData) -> str:
    if data.planner is not None:
        return _planner_section(data.planner, data.plan.run.deadline_hours)
    pts = data.sizing
    lead = f'<p class="note">{escape(data.planner_note)}</p>' if data.planner_note else ""
    if len(pts) < 2:
        return lead + _UNAVAILABLE.format(
            "Right-sizing needs at least two node counts that can be priced."
        )
    current = [p for p in pts if p.current]
    deadline = data.plan.run.deadline_hours
    cost = Series(name="real bill", points=tuple((float(p.nodes), p.total_usd) for p in pts))
    quote = Series(
        name="quote", points=tuple((float(p.nodes), p.quote_usd) for p in pts), color="#9aa5b1"
    )
    marks = (
        [
            Marker(
                label=f"plan: {current[0].nodes} nodes",
                value=float(current[0].nodes),
                color="#8a5a00",
            )
        ]
        if current
        else []
    )
    curve = xy_svg(
        [cost, quote],
        title="Cost by node count",
        x_label="nodes",
        y_label="USD",
        markers=marks,
        x_fmt=lambda v: f"{v:,.0f}",
    )
    all_pts = Series(
        name="all sizes",
        points=tuple((p.wall_hours, p.total_usd) for p in pts),
        color="#9aa5b1",
        line=False,
    )
    front = Series(
        name="Pareto front",
        points=tuple((p.wall_hours, p.total_usd) for p in data.pareto),
        color="#c0392b",
    )
    pareto = _cost_time_chart([all_pts, front], deadline)
    rows = "".join(_sizing_row(p, p in data.pareto, deadline) for p in pts)
    deadline_words = f"; the solid line is the {deadline:g} h deadline" if deadline else ""
    return (
        lead + f'<p class="note">{escape(data.sizing_basis)}.</p>'
        f'<figure>{_chart(curve)}<figcaption class="caption">Real bill and quote at each '
        "node count; the axis starts "
        "at $0.</figcaption></figure>"
        f'<figure>{_chart(pareto)}<figcaption class="caption">Each size as (hours, cost); '
        "the red line joins the sizes "
        f"no other size beats on both{escape(deadline_words)}.</figcaption></figure>"
        + _scroll(
            '<table><thead><tr><th class="num">Nodes</th><th class="num">GPUs</th>'
            '<th class="num">Wall-clock</th><th class="num">Quote</th><th class="num">Real '
            "bill</th><th>Note</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>"
        )
    )


def _sizing_row(p: SizingPoint, on_front: bool, deadline: float | None) -> str:
    notes = []
    if p.current:
        notes.append("the plan")
    if on_front:
        notes.append("Pareto-optimal")
    if deadline is not None and p.wall_hours > deadline:
        notes.append("misses the deadline")
    cls = ' class="subtotal"' if p.current else ""
    return (
        f'<tr{cls}><td class="num">{p.nodes:,}</td><td class="num">{p.gpus:,}</td>'
        f'<td class="num">{hours(p.wall_hours)}</td><td class="num">{money(p.quote_usd)}</td>'
        f'<td class="num">{money(p.total_usd)}</td><td>{escape(", ".join(notes))}</td></tr>'
    )


def _header(data: ReportData, title: str) -> str:
    u = data.forecast.usage
    return (
        f"<header><h1>{escape(title)}</h1>"
        f'<p class="subtitle">{u.nodes:,} × {escape(u.instance.instance)} ({u.gpus:,} × '
        f"{escape(u.accelerator.name)}), "
        f"{escape(u.provider)} {escape(u.region)}, {escape(u.orchestrator)}; "
        f"spot share {percent(100 * u.purchase.spot_fraction, 0)}, Savings Plan "
        f"{escape(u.purchase.savings_plan)}; "
        f'<strong>prices as of <span class="date">{u.as_of.isoformat()}</span></strong></p>'
        "</header>"
    )


def _section(title: str, body: str, cls: str = "") -> str:
    """A section whose heading is kept on the page of what follows it when printed."""
    attr = f' class="{cls}"' if cls else ""
    return f'<section{attr}><h2 class="keep-next">{escape(title)}</h2>{body}</section>'


def _assumed_item(text: str) -> str:
    """The value, then its grounds; paper keeps the value only (the grounds are on screen)."""
    text = plain_text(text)
    cut = text.find(" (")
    if cut < 0:
        return f"<li>{escape(text)}</li>"
    return f'<li>{escape(text[:cut])}<span class="why">{escape(text[cut:])}</span></li>'


def _assumptions(fc: Forecast) -> str:
    u = fc.usage
    assumed = (
        "".join(_assumed_item(a) for a in u.assumed) or "<li>none: the plan states every value</li>"
    )
    return (
        "<p>Prices are the catalog's price points in force on "
        f"<strong>{u.as_of.isoformat()}</strong> "
        f"(catalog {escape(fc.catalog_version)}); each ledger line names its price point. Values "
        "the plan did "
        "not state were taken from the catalog's assumptions"
        '<span class="print-only"> (their sources are in the HTML report and the forecast\'s '
        "--explain)</span>:</p>"
        f'<ul class="assumed">{assumed}</ul>'
    )


def _engineer(fc: Forecast, out: Outlook | None) -> str:
    """What the finance text leaves out (issue #42): the warnings and caveats as the CLI says
    them, with the plan fields and flags to act on, and the commands behind this report."""
    said = [*fc.warnings, *(f"{a.title}: {a.caveat}" for a in (out.actions if out else ()))]
    said += list(out.notes if out else ())
    items = "".join(f"<li>{escape(plain_text(t))}</li>" for t in said if plain_words(t) != t)
    changes = "".join(
        f"<li>{escape(a.title)}: <code>"
        f"{escape(', '.join(f'{k} = {v}' for k, v in a.change.items()))}</code></li>"
        for a in (out.actions if out else ())
        if a.change
    )
    return (
        '<p class="note">For whoever edits the plan file or runs the command line.</p>'
        + (f'<h3>Warnings and caveats in full</h3><ul class="note">{items}</ul>' if items else "")
        + (
            f'<h3>Plan fields each action sets</h3><ul class="note">{changes}</ul>'
            if changes
            else ""
        )
        + '<h3>Commands</h3><ul class="note"><li><code>trainbill report PLAN -o report.html '
        "--ledger-csv ledger.csv --ledger-xlsx ledger.xlsx</code></li><li><code>trainbill "
        "forecast PLAN --json</code>: every figure above, as JSON</li><li><code>trainbill "
        "optimize PLAN</code>: every point of the Pareto front</li></ul>"
    )


def render_html(data: ReportData) -> str:
    """The whole report as one HTML string: no scripts, no external resources.

    Page 1 on paper is the headline; the ledger, cost over time, time and risk follow; the
    planner's search and the assumptions close as an appendix.
    """
    fc = data.forecast
    title = f"{fc.usage.name}: training bill forecast"
    warnings = "".join(
        f'<li class="warning">{escape(plain_words(plain_text(w)))}</li>' for w in fc.warnings
    )
    deadline = data.plan.run.deadline_hours
    body = "".join(
        [
            _header(data, title),
            headline_section(data),
            f'<section class="warnings"><ul>{warnings}</ul></section>' if warnings else "",
            _ledger_section(data),
            _spend_section(data.spend if data.spend is not None else spend_of(fc)),
            _section("Time", _time_table(data)),
            _section(
                "Risk: Monte Carlo distribution",
                _simulation_section(data.simulation, data.simulation_note, deadline),
            ),
            _section(
                "Appendix: right-sizing and the cost/time Pareto front",
                _sizing_section(data),
                "appendix",
            ),
            # Plan field keys, flags and commands live from here on, never above (issue #42).
            _section("Engineer's details: assumptions and prices", _assumptions(fc), "assumptions"),
            _section(
                "Engineer's details: warnings, actions and commands",
                _engineer(fc, data.outlook),
                "engineer",
            ),
        ]
    )
    return _template().substitute(
        title=escape(title),
        body=body,
        version=escape(__version__),
        generated=data.generated.isoformat(),
        catalog_version=escape(fc.catalog_version),
    )
