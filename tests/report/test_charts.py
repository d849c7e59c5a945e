"""Chart fixes: tick labels at their true values, nothing drawn outside the chart, honest y axes."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

import pytest

from trainbill.headline import Step
from trainbill.report.charts import (
    Marker,
    Series,
    headline_waterfall_svg,
    histogram_svg,
    tick_labels,
    xy_svg,
)

#: Width of a character as a share of the font size for the test's own estimate of a label's
#: extent (DejaVu Sans digits are 0.64 em, lower case about 0.55 em): deliberately not the
#: charts' constant, so a change there cannot make this test agree with itself.
EM = 0.6


def _svg(svg: str) -> ET.Element:
    return ET.fromstring(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def _extents(svg: str) -> tuple[float, list[tuple[str, float, float]]]:
    """(viewBox width, [(text, left, right)]) for every unrotated line of text."""
    root = _svg(svg)
    width = float(root.get("viewBox", "0 0 0 0").split()[2])
    out = []
    for t in root.iter("{http://www.w3.org/2000/svg}text"):
        if t.get("transform"):
            continue  # the rotated axis title sits in the left margin by construction
        size = float(t.get("font-size", "12"))
        spans = list(t) or [t]
        for span in spans:
            text = span.text or ""
            x = float(span.get("x", t.get("x", "0")))
            w = len(text) * size * EM
            anchor = t.get("text-anchor", "start")
            left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
            out.append((text, left, left + w))
    return width, out


def _inside(svg: str) -> None:
    width, texts = _extents(svg)
    for text, left, right in texts:
        assert left >= 0, (text, left)
        assert right <= width, (text, right, width)


def test_hour_ticks_say_their_true_values() -> None:
    """Ticks 2.5 h apart need one decimal: 82.5 h, not "82 h" (the old .0f label)."""
    assert tick_labels([80, 82.5, 85, 87.5], money=False, suffix=" h") == [
        "80.0 h",
        "82.5 h",
        "85.0 h",
        "87.5 h",
    ]
    assert tick_labels([0, 50, 100], money=False, suffix=" h") == ["0 h", "50 h", "100 h"]


def test_money_ticks_say_their_true_values() -> None:
    """$162,500 is "$162.5k" (the old .3g wrote "$162k"); whole thousands stay "$160k"; zero is
    "$0"."""
    assert tick_labels([160_000, 162_500, 165_000]) == ["$160.0k", "$162.5k", "$165.0k"]
    assert tick_labels([0, 50_000, 100_000]) == ["$0", "$50k", "$100k"]
    assert tick_labels([0, 500_000, 1_000_000, 1_500_000]) == ["$0", "$0.5M", "$1.0M", "$1.5M"]


def test_histogram_axis_carries_the_half_hour_ticks() -> None:
    """Bins from 80 to 92.5 h: nice ticks 2.5 apart, each labelled at its value."""
    edges = [80 + 2.5 * i for i in range(6)]
    svg = histogram_svg(edges, [1, 4, 6, 3, 1], title="h", x_label="wall-clock hours", x_unit=" h")
    labels = re.findall(r">([0-9.,]+ h)</text>", svg)
    assert labels == ["80.0 h", "82.5 h", "85.0 h", "87.5 h", "90.0 h", "92.5 h"]


def test_a_marker_at_the_right_edge_keeps_its_label_inside() -> None:
    """A P90 marker on the last bin's edge: its label is set left of the line, inside the chart."""
    edges = [150_000 + 10_000 * i for i in range(5)]
    marks = [Marker(label="P90 $190,000 (budget to this)", value=190_000)]
    svg = histogram_svg(edges, [1, 2, 2, 1], title="bills", x_label="USD", markers=marks)
    _inside(svg)
    assert 'text-anchor="end"' in svg.split("P90 $190,000")[0].rsplit("<text", 1)[1]


def test_long_waterfall_labels_wrap_instead_of_running_off_the_left() -> None:
    """The commitment label (75 characters, ~500 units at 11 px) no longer fits the 300-unit column
    in one line."""
    label = "commitment outside the training hours (overhead hours covered, unused term)"
    steps = (
        Step(label="quote", start=0.0, end=100.0, total=True),
        Step(label=label, start=100.0, end=130.0),
        Step(label="real bill (forecast)", start=0.0, end=130.0, total=True),
    )
    svg = headline_waterfall_svg(steps)
    _inside(svg)
    assert svg.count("<tspan") >= 4  # three rows, the long one on two lines
    assert svg.count("<rect") == 3  # still one bar per step
    _inside(headline_waterfall_svg(steps, narrow=True))


def test_every_label_of_the_report_charts_is_inside_its_chart() -> None:
    """Axis ticks at both ends, legends and markers all fall within the viewBox."""
    front = Series(name="Pareto front", points=((10.9, 195_912.0), (183.5, 56_070.0)))
    plan = Series(name="the plan", points=((81.8, 164_023.0),), line=False)
    deadline = [Marker(label="deadline 180 h", value=180.0, dashed=False)]
    _inside(
        xy_svg(
            [front, plan],
            title="t",
            x_label="wall-clock hours",
            y_label="USD",
            markers=deadline,
            x_unit=" h",
        )
    )
    edges = [150_000 + 1_000 * i for i in range(41)]
    _inside(histogram_svg(edges, [5] * 40, title="t", x_label="total bill (USD)"))


def test_cost_axis_starts_at_zero_for_a_four_percent_spread() -> None:
    """Costs from $164,023 to $170,584 (4% apart) on an axis from $0: the line moves 4% of the
    plot, not all of it."""
    cost = Series(
        name="real bill", points=((32.0, 164_023.0), (64.0, 166_478.0), (128.0, 170_584.0))
    )
    svg = xy_svg([cost], title="Cost by node count", x_label="nodes", y_label="USD")
    y_ticks = re.findall(r'text-anchor="end" font-size="12">([^<]+)</text>', svg)
    assert y_ticks[0] == "$0"
    ys = [float(y) for y in re.findall(r'<circle cx="[0-9.]+" cy="([0-9.]+)"', svg)]
    top, bottom = (
        30,
        280 - 44,
    )  # the plot area's top and bottom (xy_svg: 280 high, margins 30 and 44)
    # the three points span (170,584 - 164,023) / 200,000 of the plot height (axis $0..$200k)
    assert max(ys) - min(ys) == pytest.approx(
        (170_584 - 164_023) / 200_000 * (bottom - top), abs=0.2
    )
