"""Page 1 of the report: quote, planned, real bill and budget, the waterfall, what to do."""

from __future__ import annotations

from html import escape

from trainbill.analysis import Analysis as ReportData
from trainbill.forecasting import BUDGET_LABEL, plain_words, versus_planned, versus_quote
from trainbill.headline import Outlook, waterfall
from trainbill.report._parts import _card
from trainbill.report.charts import (
    headline_waterfall_svg,
    waterfall_steps,
    waterfall_svg,
)
from trainbill.report.format import (
    hours,
    money,
    money_change,
    plain_text,
)

__all__ = ["headline_section", "waterfall_chart"]


def waterfall_chart(
    quote_usd: float, by_category: dict[str, float], *, standalone: bool = False
) -> str:
    """The quote-to-bill waterfall SVG (shared by the report and the web API)."""
    return waterfall_svg(waterfall_steps(quote_usd, by_category), standalone=standalone)


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
