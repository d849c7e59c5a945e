"""Charts as inline SVG strings, drawn in Python.

One charting approach serves both the HTML report and the web calculator: the report inlines
these SVGs, the API returns the very same SVGs for the page to insert. Drawing them here (not
with a JavaScript library from a CDN) keeps the report one self-contained file that opens
offline and prints as vectors, and keeps the page free of third-party code. Every text node is
HTML-escaped, so plan names cannot inject markup.

The functions take plain numbers; working out *what* to plot (e.g. the waterfall steps from a
forecast) is separate and testable (``waterfall_steps``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from html import escape

from trainbill._record import record
from trainbill.headline import Step
from trainbill.report.format import money, money_change

__all__ = [
    "Marker",
    "Series",
    "WaterfallStep",
    "error_over_time_svg",
    "headline_waterfall_svg",
    "histogram_svg",
    "nice_ticks",
    "text_width",
    "tick_labels",
    "waterfall_steps",
    "waterfall_svg",
    "xy_svg",
]

_INK = "#1f2933"
_GRID = "#d9dee4"
_UP = "#c0392b"
_DOWN = "#2e8b57"
_TOTAL = "#2c5d8f"
_FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\""
_SVG_NS = "http://www.w3.org/2000/svg"
#: Font size of tick and marker labels: the charts are drawn 760 wide and shown at 600-760 px
#: on paper and screens, so 12 stays at 9.5 px or more.
_TICK = 12


#: One bar of a waterfall: the library's own step (``trainbill.forecasting.Step``), drawn as is.
WaterfallStep = Step


@record
class Series:
    """A line (or points only) on an x/y chart."""

    name: str
    points: tuple[tuple[float, float], ...]
    color: str = _TOTAL
    line: bool = True


@record
class Marker:
    """A labelled vertical (``axis='x'``) or horizontal (``axis='y'``) reference line."""

    label: str
    value: float
    axis: str = "x"
    color: str = _UP
    dashed: bool = True


@record
class _Frame:
    """Plot area and the data ranges mapped onto it."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    x0: float
    x1: float
    y0: float
    y1: float
    parts: list[str] = field(default_factory=list)

    def x(self, v: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        return self.left + (v - self.x0) / span * (self.width - self.left - self.right)

    def y(self, v: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        return (
            self.height
            - self.bottom
            - (v - self.y0) / span * (self.height - self.top - self.bottom)
        )


def waterfall_steps(
    quote_usd: float, by_category: Mapping[str, float]
) -> tuple[WaterfallStep, ...]:
    """From the quote to the real bill, one category at a time.

    The quote is on-demand compute only, so the compute bar is the *difference* between the
    real compute cost and the quote (negative when spot or a Savings Plan makes compute
    cheaper); every other category adds its whole amount. The last bar therefore lands exactly
    on the ledger total: quote + (compute - quote) + sum(others) = sum(all categories).
    """
    steps = [WaterfallStep(label="quote", start=0.0, end=quote_usd, total=True)]
    level = quote_usd
    for cat, amount in by_category.items():
        delta = amount - quote_usd if cat == "compute" else amount
        if cat != "compute" and amount == 0:
            continue
        label = "compute vs quote" if cat == "compute" else cat
        steps.append(WaterfallStep(label=label, start=level, end=level + delta))
        level += delta
    steps.append(WaterfallStep(label="real bill", start=0.0, end=level, total=True))
    return tuple(steps)


def nice_ticks(lo: float, hi: float, count: int = 5) -> tuple[float, ...]:
    """Round tick values (1, 2, 2.5 or 5 × 10^k apart) covering ``[lo, hi]``."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return (0.0,)
    if hi == lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks: list[float] = []
    t = first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 10))
    return tuple(ticks)


#: Width of one character as a share of the font size, on the wide side for system-ui and
#: Roboto (digits ~0.55 em, capitals up to ~0.7 em): layout reserves at least this much room.
_CHAR_EM = 0.62


def text_width(s: str, size: float) -> float:
    """Estimated width in SVG units of ``s`` at font size ``size`` (no font metrics offline)."""
    return len(s) * size * _CHAR_EM


def tick_labels(ticks: Sequence[float], *, money: bool = True, suffix: str = "") -> list[str]:
    """Labels that say each tick's true value, with the fewest decimals that do.

    ``$162.5k`` for a tick at 162,500 (a fixed ``.3g`` wrote ``$162k``), ``82.5 h`` for 82.5
    (``.0f`` wrote ``82 h``). Money is shortened to k or M by the largest tick.
    """
    if not ticks:
        return []
    top = max(abs(t) for t in ticks)
    scale, unit = (
        (1e6, "M") if money and top >= 1e6 else (1e3, "k") if money and top >= 1e3 else (1.0, "")
    )
    places = next(
        (
            d
            for d in range(7)
            if all(
                math.isclose(round(t / scale, d) * scale, t, rel_tol=1e-9, abs_tol=1e-9)
                for t in ticks
            )
        ),
        6,
    )
    out = []
    for t in ticks:
        v = round(t / scale, places) + 0.0
        if v == 0:  # "$0", not "$0.0k"
            out.append(f"$0{suffix}" if money else f"0{suffix}")
            continue
        body = f"{abs(v):,.{places}f}"
        sign = "-" if v < 0 else ""
        out.append(f"{sign}${body}{unit}{suffix}" if money else f"{sign}{body}{unit}{suffix}")
    return out


def _short_money(v: float) -> str:
    a = abs(v)
    sign = "-" if v < 0 else ""
    if a >= 1e6:
        return f"{sign}${a / 1e6:,.3g}M"
    if a >= 1e3:
        return f"{sign}${a / 1e3:,.3g}k"
    return money(v)


def _open(width: int, height: int, title: str, *, standalone: bool) -> str:
    ns = f' xmlns="{_SVG_NS}"' if standalone else ""
    return (
        f'<svg{ns} viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="{escape(title)}" class="chart" {_FONT} font-size="12" fill="{_INK}">'
        f"<title>{escape(title)}</title>"
    )


def _text(
    x: float, y: float, s: str, *, anchor: str = "middle", size: int = 11, extra: str = ""
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"{extra}>'
        f"{escape(s)}</text>"
    )


def _y_axis(f: _Frame, ticks: Sequence[float], labels: Sequence[str], label: str) -> None:
    for t, text in zip(ticks, labels, strict=True):
        yy = f.y(t)
        f.parts.append(
            f'<line x1="{f.left}" x2="{f.width - f.right}" y1="{yy:.1f}" y2="{yy:.1f}" '
            f'stroke="{_GRID}" stroke-width="1"/>'
        )
        f.parts.append(_text(f.left - 6, yy + 4, text, anchor="end", size=_TICK))
    if label:
        cy = (f.top + f.height - f.bottom) / 2
        f.parts.append(
            _text(14, cy, label, size=_TICK, extra=f' transform="rotate(-90 14 {cy:.1f})"')
        )


def _x_axis(f: _Frame, ticks: Sequence[float], labels: Sequence[str], label: str) -> None:
    base = f.height - f.bottom
    f.parts.append(
        f'<line x1="{f.left}" x2="{f.width - f.right}" y1="{base}" y2="{base}" stroke="{_INK}"/>'
    )
    for t, text in zip(ticks, labels, strict=True):
        xx = f.x(t)
        f.parts.append(
            f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{base}" y2="{base + 4}" stroke="{_INK}"/>'
        )
        f.parts.append(_text(xx, base + 17, text, size=_TICK))
    if label:
        f.parts.append(_text((f.left + f.width - f.right) / 2, f.height - 6, label, size=_TICK))


def _side_room(labels: Sequence[str], minimum: int) -> int:
    """Margin that holds half of an end tick's label (it is centred on the plot's edge)."""
    widest = max((text_width(t, _TICK) for t in labels[-1:]), default=0.0)
    return max(minimum, math.ceil(widest / 2) + 4)


def _left_room(labels: Sequence[str], minimum: int) -> int:
    """Margin for right-aligned y tick labels beside a rotated axis title."""
    widest = max((text_width(t, _TICK) for t in labels), default=0.0)
    return max(minimum, math.ceil(widest) + 30)


def _markers(f: _Frame, markers: Sequence[Marker]) -> None:
    """Reference lines with their labels; a label that would run off the plot's right edge is
    set to the left of its line instead."""
    for i, m in enumerate(markers):
        if not math.isfinite(m.value):
            continue
        dash = ' stroke-dasharray="5 4"' if m.dashed else ""
        colour = f' fill="{m.color}"'
        if m.axis == "x":
            xx = f.x(m.value)
            f.parts.append(
                f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{f.top}" y2="{f.height - f.bottom}" '
                f'stroke="{m.color}" stroke-width="1.5"{dash}/>'
            )
            # A label reads toward the plot's middle: right of a line in the left half, left of
            # one in the right half. On a phone the chart scrolls in a box narrower than it, and
            # a label running right from a line near the edge was cut to "P90 $1" (issue #42).
            fits = xx + 4 + text_width(m.label, _TICK) <= f.width - 2
            middle = (f.left + f.width - f.right) / 2
            left_room = xx - 4 - text_width(m.label, _TICK) >= f.left
            right = fits and (xx <= middle or not left_room)
            anchor, tx = ("start", xx + 4) if right else ("end", xx - 4)
            y = f.top + 12 + 14 * i
            f.parts.append(_text(tx, y, m.label, anchor=anchor, size=_TICK, extra=colour))
        else:
            yy = f.y(m.value)
            f.parts.append(
                f'<line x1="{f.left}" x2="{f.width - f.right}" y1="{yy:.1f}" y2="{yy:.1f}" '
                f'stroke="{m.color}" stroke-width="1.5"{dash}/>'
            )
            x = f.width - f.right - 4
            f.parts.append(_text(x, yy - 4, m.label, anchor="end", size=_TICK, extra=colour))


def waterfall_svg(
    steps: Sequence[WaterfallStep], *, title: str = "Quote to real bill", standalone: bool = False
) -> str:
    """Floating-bar waterfall: totals in blue, increases red, decreases green, labelled in $."""
    width, height = 760, 340
    values = [0.0] + [v for s in steps for v in (s.start, s.end)]
    ticks = nice_ticks(min(values), max(values))
    f = _Frame(width=width, height=height, left=70, right=12, top=28, bottom=92,
               x0=0, x1=max(len(steps), 1), y0=ticks[0], y1=ticks[-1])  # fmt: skip
    _y_axis(f, ticks, tick_labels(ticks), "")
    slot = (width - f.left - f.right) / max(len(steps), 1)
    bar_w = slot * 0.64
    for i, s in enumerate(steps):
        lo, hi = sorted((s.start, s.end))
        color = _TOTAL if s.total else (_UP if s.delta > 0 else _DOWN)
        x = f.left + i * slot + (slot - bar_w) / 2
        y_top = f.y(hi)
        h = max(f.y(lo) - y_top, 1.0)
        f.parts.append(
            f'<rect x="{x:.1f}" y="{y_top:.1f}" width="{bar_w:.1f}" height="{h:.1f}" '
            f'fill="{color}">'
            f"<title>{escape(s.label)}: "
            f"{escape(money(s.end if s.total else s.delta))}</title></rect>"
        )
        if i + 1 < len(steps) and not steps[i + 1].total:
            nx = f.left + (i + 1) * slot + (slot - bar_w) / 2
            yy = f.y(s.end)
            f.parts.append(
                f'<line x1="{x + bar_w:.1f}" x2="{nx:.1f}" y1="{yy:.1f}" y2="{yy:.1f}" '
                f'stroke="{_INK}" stroke-width="0.6" stroke-dasharray="2 2"/>'
            )
        amount = s.end if s.total else s.delta
        label = _short_money(amount) if s.total or amount < 0 else "+" + _short_money(amount)
        f.parts.append(_text(x + bar_w / 2, y_top - 5, label, size=10))
        cx, cy = x + bar_w / 2, height - f.bottom + 14
        f.parts.append(
            _text(
                cx,
                cy,
                s.label,
                anchor="end",
                size=10,
                extra=f' transform="rotate(-35 {cx:.1f} {cy:.1f})"',
            )
        )
    base = f.y(0.0)
    f.parts.append(
        f'<line x1="{f.left}" x2="{width - f.right}" y1="{base:.1f}" y2="{base:.1f}" '
        f'stroke="{_INK}"/>'
    )
    return _open(width, height, title, standalone=standalone) + "".join(f.parts) + "</svg>"


def _wrap(text: str, max_px: float, size: float) -> list[str]:
    """Words of ``text`` in lines no wider than ``max_px`` (a single word longer stays whole)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size) <= max_px:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines or [""]


def _lines(
    x: float, y: float, lines: Sequence[str], *, anchor: str, size: int, extra: str = ""
) -> str:
    """One text element, one tspan per line, the first line's baseline at ``y``."""
    spans = "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else 1.2 * size:.1f}">{escape(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" '
        f'font-size="{size}"{extra}>{spans}</text>'
    )


def _step_colour(st: Step) -> str:
    return _TOTAL if st.total else (_UP if st.delta > 0 else _DOWN)


def _step_amount(st: Step) -> str:
    return money(st.end) if st.total else money_change(st.delta)


def headline_waterfall_svg(steps: Sequence[Step], *, title: str = "From the quote to the budget",
                           standalone: bool = False, narrow: bool = False) -> str:  # fmt: skip
    """The headline waterfall lying down: one row per step, its label on the left in full.

    The labels are sentences a budget approver reads ("work redone after hardware failures"),
    too long to stand rotated under vertical bars; rows keep them legible on paper and phones.
    A label too long for its column wraps onto a second line rather than running off the
    chart. Totals are blue bars from zero; changes float from the level before them (red up,
    green down). ``narrow`` draws the phone layout: each label on its own line above its bar.
    """
    if narrow:
        return _headline_waterfall_narrow(steps, title=title, standalone=standalone)
    size, left, right, top, width = 11, 300, 86, 8, 760
    wrapped = [_wrap(st.label, left - 12, size) for st in steps]
    heights = [22 + 13 * (len(w) - 1) for w in wrapped]
    height = top + sum(heights) + 26
    values = [0.0] + [v for st in steps for v in (st.start, st.end)]
    ticks = nice_ticks(min(values), max(values), count=4)
    f = _Frame(width=width, height=height, left=left, right=right, top=top, bottom=26,
               x0=ticks[0], x1=ticks[-1], y0=0, y1=1)  # fmt: skip
    for t, text in zip(ticks, tick_labels(ticks), strict=True):
        xx = f.x(t)
        f.parts.append(
            f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{top}" y2="{height - 22}" stroke="{_GRID}"/>'
        )
        f.parts.append(_text(xx, height - 8, text, size=10))
    y = top
    for st, lines, h in zip(steps, wrapped, heights, strict=True):
        lo, hi = sorted((st.start, st.end))
        x0, x1 = f.x(lo), f.x(hi)
        amount = _step_amount(st)
        weight = ' font-weight="600"' if st.total else ""
        bar_y = y + (h - 14) / 2
        f.parts.append(_lines(left - 8, y + 15, lines, anchor="end", size=size, extra=weight))
        f.parts.append(
            f'<rect x="{x0:.1f}" y="{bar_y:.1f}" width="{max(x1 - x0, 1.0):.1f}" height="14" '
            f'fill="{_step_colour(st)}">'
            f"<title>{escape(st.label)}: {escape(amount)}</title></rect>"
        )
        f.parts.append(_text(width - 4, bar_y + 11, amount, anchor="end", size=size, extra=weight))
        y += h
    return _open(width, height, title, standalone=standalone) + "".join(f.parts) + "</svg>"


def _headline_waterfall_narrow(steps: Sequence[Step], *, title: str, standalone: bool) -> str:
    """Phone layout: label line(s), then the bar with its amount, 360 units wide (drawn about
    1:1)."""
    size, width, amount_w, pad = 13, 360, 84, 2
    values = [0.0] + [v for st in steps for v in (st.start, st.end)]
    lo_v, hi_v = min(values), max(values)
    f = _Frame(width=width, height=1, left=pad, right=amount_w, top=0, bottom=0,
               x0=lo_v, x1=hi_v, y0=0, y1=1)  # fmt: skip
    y = 4.0
    for st in steps:
        lines = _wrap(st.label, width - 2 * pad, size)
        weight = ' font-weight="600"' if st.total else ""
        f.parts.append(_lines(pad, y + size, lines, anchor="start", size=size, extra=weight))
        y += size * 1.2 * len(lines) + 4
        lo, hi = sorted((st.start, st.end))
        x0, x1 = f.x(lo), f.x(hi)
        amount = _step_amount(st)
        f.parts.append(
            f'<rect x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0, 1.0):.1f}" height="12" '
            f'fill="{_step_colour(st)}">'
            f"<title>{escape(st.label)}: {escape(amount)}</title></rect>"
        )
        f.parts.append(_text(width - pad, y + 11, amount, anchor="end", size=size, extra=weight))
        y += 12 + 10
    return _open(width, math.ceil(y), title, standalone=standalone) + "".join(f.parts) + "</svg>"


def histogram_svg(
    edges: Sequence[float],
    counts: Sequence[int],
    *,
    title: str,
    x_label: str,
    markers: Sequence[Marker] = (),
    x_unit: str = "$",
    standalone: bool = False,
) -> str:
    """Histogram from bin edges (n + 1) and counts (n), with reference lines (P50, P90, deadline).

    ``x_unit`` "$" labels the x axis in dollars; anything else is a suffix (" h"). Tick labels
    carry each tick's true value (``tick_labels``).
    """
    width, height = 760, 260
    if len(edges) != len(counts) + 1 or not counts:
        return (
            _open(width, height, title, standalone=standalone)
            + _text(width / 2, height / 2, "no data")
            + "</svg>"
        )
    xs = [*edges, *(m.value for m in markers if m.axis == "x" and math.isfinite(m.value))]
    xt = nice_ticks(min(xs), max(xs))
    yt = nice_ticks(0, max(*counts, 1))
    x_text = tick_labels(xt, money=x_unit == "$", suffix="" if x_unit == "$" else x_unit)
    y_text = tick_labels(yt, money=False)
    f = _Frame(
        width=width,
        height=height,
        left=_left_room(y_text, 56),
        right=_side_room(x_text, 14),
        top=20,
        bottom=44,
        x0=xt[0],
        x1=xt[-1],
        y0=0,
        y1=yt[-1],
    )
    _y_axis(f, yt, y_text, "trials")
    _x_axis(f, xt, x_text, x_label)
    for i, c in enumerate(counts):
        if not c:
            continue
        xa, xb = f.x(edges[i]), f.x(edges[i + 1])
        y_top = f.y(c)
        f.parts.append(
            f'<rect x="{xa:.1f}" y="{y_top:.1f}" width="{max(xb - xa - 0.5, 1):.1f}" '
            f'height="{f.y(0) - y_top:.1f}" fill="{_TOTAL}" fill-opacity="0.75"/>'
        )
    _markers(f, markers)
    return _open(width, height, title, standalone=standalone) + "".join(f.parts) + "</svg>"


def xy_svg(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    markers: Sequence[Marker] = (),
    x_unit: str = "",
    x_fmt: Callable[[float], str] = lambda v: f"{v:,.4g}",
    y_fmt: Callable[[float], str] = _short_money,
    standalone: bool = False,
) -> str:
    """Lines and points on linear axes (right-sizing curve, Pareto front), with a legend.

    The y axis (dollars) starts at zero: a cost curve that moves 4% must look like it, not
    fill the plot from bottom to top. ``x_unit`` is the x tick labels' suffix; ``x_fmt`` and
    ``y_fmt`` write the values in each point's tooltip.
    """
    width, height = 760, 280
    xs = [p[0] for s in series for p in s.points if math.isfinite(p[0])]
    ys = [p[1] for s in series for p in s.points if math.isfinite(p[1])]
    xs += [m.value for m in markers if m.axis == "x" and math.isfinite(m.value)]
    ys += [m.value for m in markers if m.axis == "y" and math.isfinite(m.value)]
    if not xs or not ys:
        return (
            _open(width, height, title, standalone=standalone)
            + _text(width / 2, height / 2, "no data")
            + "</svg>"
        )
    xt = nice_ticks(min(xs), max(xs))
    yt = nice_ticks(min(0.0, *ys), max(0.0, *ys))
    x_text = tick_labels(xt, money=False, suffix=x_unit)
    y_text = tick_labels(yt)
    f = _Frame(
        width=width,
        height=height,
        left=_left_room(y_text, 70),
        right=_side_room(x_text, 14),
        top=30,
        bottom=44,
        x0=xt[0],
        x1=xt[-1],
        y0=yt[0],
        y1=yt[-1],
    )
    _y_axis(f, yt, y_text, y_label)
    _x_axis(f, xt, x_text, x_label)
    lx = f.left + 10
    for s in series:
        pts = [(f.x(x), f.y(y)) for x, y in s.points if math.isfinite(x) and math.isfinite(y)]
        if s.line and len(pts) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            f.parts.append(
                f'<polyline points="{path}" fill="none" stroke="{s.color}" stroke-width="2"/>'
            )
        for (x, y), (dx, dy) in zip(pts, s.points, strict=False):
            f.parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{s.color}">'
                f"<title>{escape(s.name)}: {escape(x_fmt(dx))}, "
                f"{escape(y_fmt(dy))}</title></circle>"
            )
        f.parts.append(f'<rect x="{lx}" y="8" width="12" height="12" fill="{s.color}"/>')
        f.parts.append(_text(lx + 18, 18, s.name, anchor="start", size=_TICK))
        lx += 18 + math.ceil(text_width(s.name, _TICK)) + 24
    _markers(f, markers)
    return _open(width, height, title, standalone=standalone) + "".join(f.parts) + "</svg>"


def error_over_time_svg(
    labels: Sequence[str],
    errors_pct: Sequence[float],
    *,
    title: str = "Forecast error per closed run",
    standalone: bool = False,
) -> str:
    """The team's forecast error (forecast / bill − 1, in %) per closed run, oldest first: a
    line with a dot per run and the zero line, so a bias (always under) shows as a side."""
    width, height = 760, 260
    if not errors_pct:
        return (
            _open(width, height, title, standalone=standalone)
            + _text(width / 2, height / 2, "no closed runs yet")
            + "</svg>"
        )
    yt = nice_ticks(min(0.0, *errors_pct), max(0.0, *errors_pct))
    ylabels = tick_labels(yt, money=False, suffix="%")
    n = len(errors_pct)
    f = _Frame(width=width, height=height, left=_left_room(ylabels, 60), right=30, top=16,
               bottom=40, x0=-0.5, x1=n - 0.5, y0=yt[0], y1=yt[-1])  # fmt: skip
    _y_axis(f, yt, ylabels, "forecast error")
    _x_axis(f, list(range(n)), list(labels), "")
    zero = f.y(0.0)
    f.parts.append(
        f'<line x1="{f.left}" x2="{f.width - f.right}" y1="{zero:.1f}" y2="{zero:.1f}" '
        f'stroke="{_INK}" stroke-dasharray="4 3"/>'
    )
    pts = " ".join(f"{f.x(i):.1f},{f.y(e):.1f}" for i, e in enumerate(errors_pct))
    f.parts.append(f'<polyline points="{pts}" fill="none" stroke="{_TOTAL}" stroke-width="2"/>')
    for i, e in enumerate(errors_pct):
        colour = _UP if e < 0 else _DOWN
        f.parts.append(f'<circle cx="{f.x(i):.1f}" cy="{f.y(e):.1f}" r="4" fill="{colour}"/>')
    return _open(width, height, title, standalone=standalone) + "".join(f.parts) + "</svg>"
