"""The report for finance: one self-contained HTML file with the quote, the real bill and why.

``build_report`` is ``trainbill.analysis.analyse``: the library works out what there is to show
(the forecast; the planner's right-sizing table and cost/time Pareto front, or a node-count
sweep where the planner cannot run; the Monte Carlo distribution) as a ``ReportData``
(``trainbill.analysis.Analysis``); ``render_html`` turns that into HTML. The report only
presents, so the arithmetic is tested without parsing HTML and the web app shows the same
numbers.

Everything is inlined (style, SVG charts; no scripts, no fonts, no URLs that load anything), so
the file opens offline, can be mailed as an attachment and prints cleanly.
"""

from __future__ import annotations

from trainbill.analysis import Analysis as ReportData
from trainbill.analysis import analyse as build_report
from trainbill.report._html import render_html

__all__ = ["ReportData", "build_report", "render_html"]
