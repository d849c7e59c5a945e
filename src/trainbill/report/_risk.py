"""The report's time table and its Monte Carlo section (bill and wall-clock distributions)."""

from __future__ import annotations

from html import escape

from trainbill.analysis import Analysis as ReportData
from trainbill.analysis import SimulationSummary
from trainbill.report._parts import (
    _UNAVAILABLE,
    _card,
    _chart,
    _deadline_markers,
    _scroll,
)
from trainbill.report.charts import (
    Marker,
    histogram_svg,
)
from trainbill.report.format import (
    hours,
    money,
    number,
    percent,
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
