"""ReportData → one self-contained HTML page (template in package data, SVG charts inline).

This module assembles the page (header, the sections in reading order, the engineer's
appendix) from one module per part of the report, split along the report's own sections so
each reads on its own: ``_headline`` (page 1), ``_ledger`` (ledger, cost over time), ``_risk``
(time, Monte Carlo), ``_sizing`` (planner and right-sizing appendix) and ``_parts`` (the cards,
boxes and charts they share). Every name this module defined before the split is still
importable from here.
"""

from __future__ import annotations

from html import escape
from importlib import resources
from string import Template

from trainbill import __version__
from trainbill.analysis import Analysis as ReportData
from trainbill.forecasting import Forecast, plain_words
from trainbill.headline import Outlook
from trainbill.report._headline import _actions, headline_section, waterfall_chart
from trainbill.report._ledger import (
    DAY_ROWS,
    MONTH_ROWS,
    PRINT_LEDGER_LINES,
    _category_table,
    _data_link,
    _downloads,
    _file_stem,
    _largest_lines,
    _ledger_section,
    _line_row,
    _period_rows,
    _sources,
    _sources_table,
    _spend_section,
    ledger_table,
)
from trainbill.report._parts import (
    _UNAVAILABLE,
    _card,
    _chart,
    _cost_time_chart,
    _deadline_markers,
    _scroll,
    _section,
)
from trainbill.report._risk import _simulation_section, _time_table
from trainbill.report._sizing import (
    _FRONT_ROWS,
    _HL,
    _PRINT_FRONT_ROWS,
    _best_in_deadline,
    _front_table,
    _mix,
    _per_hour,
    _planner_section,
    _rightsizing,
    _row_class,
    _row_notes,
    _sizing_row,
    _sizing_section,
    _thin,
)
from trainbill.report.format import percent, plain_text
from trainbill.spend import spend_of

#: What this module defined before the split: the three public names and, so that no import
#: breaks, every helper that moved to the modules beside it.
__all__ = [
    "DAY_ROWS",
    "MONTH_ROWS",
    "PRINT_LEDGER_LINES",
    "_FRONT_ROWS",
    "_HL",
    "_PRINT_FRONT_ROWS",
    "_UNAVAILABLE",
    "_actions",
    "_best_in_deadline",
    "_card",
    "_category_table",
    "_chart",
    "_cost_time_chart",
    "_data_link",
    "_deadline_markers",
    "_downloads",
    "_file_stem",
    "_front_table",
    "_largest_lines",
    "_ledger_section",
    "_line_row",
    "_mix",
    "_per_hour",
    "_period_rows",
    "_planner_section",
    "_rightsizing",
    "_row_class",
    "_row_notes",
    "_scroll",
    "_section",
    "_simulation_section",
    "_sizing_row",
    "_sizing_section",
    "_sources",
    "_sources_table",
    "_spend_section",
    "_thin",
    "_time_table",
    "headline_section",
    "ledger_table",
    "render_html",
    "waterfall_chart",
]


def _template() -> Template:
    text = (
        resources.files("trainbill.report")
        .joinpath("templates/report.html")
        .read_text(encoding="utf-8")
    )
    return Template(text)


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
