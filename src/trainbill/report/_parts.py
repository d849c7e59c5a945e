"""Building blocks every section of the report uses: a card, a scroll box, a chart box, a
section with its heading, the cost/time chart and the deadline marker.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from trainbill.report.charts import (
    Marker,
    Series,
    xy_svg,
)

_UNAVAILABLE = '<p class="unavailable">{}</p>'


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


def _scroll(table: str) -> str:
    """A table in its own horizontal scroll box, so a wide table never widens the page."""
    return f'<div class="scroll">{table}</div>'


def _chart(svg: str) -> str:
    """A chart in a box that scrolls sideways on a phone rather than shrinking it unreadably."""
    return f'<div class="chart-box">{svg}</div>'


def _section(title: str, body: str, cls: str = "") -> str:
    """A section whose heading is kept on the page of what follows it when printed."""
    attr = f' class="{cls}"' if cls else ""
    return f'<section{attr}><h2 class="keep-next">{escape(title)}</h2>{body}</section>'
