"""The report for finance: one self-contained HTML file with the quote, the real bill and why.

``build_report`` gathers what there is to show (the forecast; the planner's right-sizing
table and cost/time Pareto front, or a node-count sweep where the planner cannot run; the
Monte Carlo distribution when ``trainbill.simulate`` is installed in this build) into a
``ReportData``; ``render_html`` turns that into HTML. Splitting the two keeps the arithmetic testable without parsing HTML.

Everything is inlined (style, SVG charts; no scripts, no fonts, no URLs that load anything), so
the file opens offline, can be mailed as an attachment and prints cleanly.
"""

from __future__ import annotations

from trainbill.report._build import (
    PlannerSummary,
    ReportData,
    SimulationSummary,
    SizingPoint,
    build_report,
    pareto_front,
    planner_summary,
    right_sizing,
    simulation_summary,
)
from trainbill.report._html import render_html

__all__ = [
    "PlannerSummary",
    "ReportData",
    "SimulationSummary",
    "SizingPoint",
    "build_report",
    "pareto_front",
    "planner_summary",
    "render_html",
    "right_sizing",
    "simulation_summary",
]
