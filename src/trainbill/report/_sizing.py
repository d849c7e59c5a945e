"""The report's appendix: the planner's right-sizing and cost/time Pareto front, or, where the
planner cannot run, the node-count sweep.
"""

from __future__ import annotations

from html import escape

from trainbill.analysis import Analysis as ReportData
from trainbill.analysis import PlannerSummary, SizingPoint
from trainbill.forecasting import plain_words
from trainbill.optimize import Candidate
from trainbill.report._parts import _UNAVAILABLE, _chart, _cost_time_chart, _scroll
from trainbill.report.charts import (
    Marker,
    Series,
    xy_svg,
)
from trainbill.report.format import (
    hours,
    money,
    percent,
)

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
