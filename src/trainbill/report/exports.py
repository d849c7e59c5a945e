"""The ledger as files finance opens in a spreadsheet: CSV and XLSX.

Both take what ``trainbill.forecast`` returns (a ``Forecast``) and return the file's bytes, so
the report (data: links), the CLI (``trainbill report --ledger-csv/--ledger-xlsx``) and the web
page serve the very same files.

Money is written to the cent and quantities to at most six decimals, from the unrounded
ledger at this last step: a spreadsheet shows ``113264.64``, never the binary float's
``113264.63999999998``. The XLSX stores numbers as numbers (currency and thousands formats),
written by XlsxWriter (the ``report`` extra), so sums and pivots work without conversion.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from trainbill import __version__
from trainbill.errors import TrainbillError
from trainbill.forecasting import Forecast
from trainbill.ledger import LineItem
from trainbill.report.format import category_name, plain_text
from trainbill.spend import Period, spend_of
from trainbill.tabular import cell

if TYPE_CHECKING:
    from trainbill.headline import Outlook

__all__ = ["COLUMNS", "ledger_csv", "ledger_xlsx"]

#: Columns of both exports, in order.
COLUMNS: tuple[str, ...] = (
    "category",
    "category_name",
    "item",
    "quantity",
    "unit",
    "unit_price_usd",
    "cost_usd",
    "share_pct",
    "basis",
    "source",
    "service_category",
    "pricing_category",
)
#: Decimal places kept: cents for amounts, six for unit prices ($0.0004 per request) and
#: quantities, two for percentages.
_CENTS, _FINE, _PCT = 2, 6, 2


def _round(x: float, places: int) -> float:
    """``x`` at ``places`` decimals, without a negative zero."""
    return round(x, places) + 0.0


def _decimal(x: float, places: int, keep: int = 0) -> str:
    """Fixed-point text with at most ``places`` decimals and at least ``keep`` (no float noise)."""
    text = f"{_round(x, places):.{places}f}"
    if places > keep:
        whole, frac = text.split(".")
        frac = frac.rstrip("0").ljust(keep, "0")
        text = f"{whole}.{frac}" if frac else whole
    return text


def _share(line: LineItem, total: float) -> float:
    return 100 * line.cost_usd / total if total else 0.0


def _apportioned(values: Sequence[float], places: int) -> list[float]:
    """``values`` rounded to ``places`` decimals so that they add up to their sum rounded the
    same way (largest remainder): a finance reader sums the cost column and must get the
    total, which rounding each line on its own missed by a cent or two."""
    unit = 10.0**places
    scaled = [v * unit for v in values]
    floors = [math.floor(x) for x in scaled]
    left = round(sum(scaled)) - sum(floors)
    order = sorted(range(len(values)), key=lambda i: scaled[i] - floors[i], reverse=True)
    for i in order[: max(0, left)]:
        floors[i] += 1
    return [f / unit for f in floors]


def _rows(fc: Forecast) -> list[tuple[str, ...]]:
    # Text cells go through the one formula-injection guard (``tabular.cell``); the numbers are
    # already decimal strings, and a negative amount must stay a number, not become text.
    total = fc.total_usd
    lines = fc.ledger.lines
    costs = _apportioned([ln.cost_usd for ln in lines], _CENTS)
    shares = _apportioned([_share(ln, total) for ln in lines], _PCT)
    return [
        (
            cell(ln.category),
            cell(category_name(ln.category)),
            cell(ln.item),
            _decimal(ln.quantity, _FINE),
            cell(ln.unit),
            _decimal(ln.unit_price_usd, _FINE, keep=_CENTS),
            _decimal(cost, _CENTS, keep=_CENTS),
            _decimal(share, _PCT, keep=_PCT),
            cell(ln.basis),
            cell(plain_text(ln.source)),
            cell(ln.service_category),
            cell(ln.pricing_category),
        )
        for ln, cost, share in zip(lines, costs, shares, strict=True)
    ]


def ledger_csv(result: Forecast) -> bytes:
    """Every ledger line as UTF-8 CSV with a header row.

    A byte-order mark leads the file so Excel reads the × and – in the basis as UTF-8 (it
    assumes the local code page otherwise); Python's csv, pandas and LibreOffice skip it.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    writer.writerows(_rows(result))
    return out.getvalue().encode("utf-8-sig")


def _xlsxwriter() -> Any:
    try:
        import xlsxwriter
    except ImportError:
        msg = (
            "the XLSX export needs the 'report' extra (XlsxWriter is missing): pip install "
            "'trainbill[report]'"
        )
        raise TrainbillError(msg) from None
    return xlsxwriter


class _Book:
    """One in-memory workbook with the few cell formats the sheets share."""

    def __init__(self, xlsxwriter: Any) -> None:
        self.buffer = io.BytesIO()
        self.wb = xlsxwriter.Workbook(self.buffer, {"in_memory": True})
        self.bold = self.wb.add_format({"bold": True})
        self.usd = self.wb.add_format({"num_format": "$#,##0.00"})
        self.usd_fine = self.wb.add_format({"num_format": "$#,##0.00####"})
        self.num = self.wb.add_format({"num_format": "#,##0.######"})
        self.pct = self.wb.add_format({"num_format": "0.00\\%"})
        self.total = self.wb.add_format({"bold": True, "num_format": "$#,##0.00", "top": 1})

    def sheet(self, name: str, header: Sequence[str], widths: Sequence[int]) -> Any:
        ws = self.wb.add_worksheet(name)
        ws.write_row(0, 0, header, self.bold)
        ws.freeze_panes(1, 0)
        for i, w in enumerate(widths):
            ws.set_column(i, i, w)
        return ws

    def close(self) -> bytes:
        self.wb.close()
        return self.buffer.getvalue()


def _ledger_sheet(book: _Book, fc: Forecast) -> None:
    ws = book.sheet("Ledger", COLUMNS, (14, 34, 40, 14, 14, 14, 14, 9, 60, 60, 16, 16))
    total = fc.total_usd
    lines = fc.ledger.lines
    for r, ln in enumerate(lines, start=1):
        ws.write_string(r, 0, ln.category)
        ws.write_string(r, 1, category_name(ln.category))
        ws.write_string(r, 2, ln.item)
        ws.write_number(r, 3, _round(ln.quantity, _FINE), book.num)
        ws.write_string(r, 4, ln.unit)
        ws.write_number(r, 5, _round(ln.unit_price_usd, _FINE), book.usd_fine)
        ws.write_number(r, 6, _round(ln.cost_usd, _CENTS), book.usd)
        ws.write_number(r, 7, _round(_share(ln, total), _PCT), book.pct)
        ws.write_string(r, 8, ln.basis)
        ws.write_string(r, 9, plain_text(ln.source))
        ws.write_string(r, 10, ln.service_category)
        ws.write_string(r, 11, ln.pricing_category)
    last = len(lines) + 1
    ws.write_string(last, 2, "Real bill (forecast)", book.bold)
    cents = sum(_round(ln.cost_usd, _CENTS) for ln in lines)  # what the formula adds up to
    ws.write_formula(last, 6, f"=SUM(G2:G{last})", book.total, _round(cents, _CENTS))
    ws.autofilter(0, 0, last - 1, len(COLUMNS) - 1)


def _periods_sheet(book: _Book, name: str, periods: Sequence[Period]) -> None:
    ws = book.sheet(name, ("period", "cost_usd", "run_hours"), (12, 16, 12))
    for r, p in enumerate(periods, start=1):
        ws.write_string(r, 0, p.label)
        ws.write_number(r, 1, _round(p.usd, _CENTS), book.usd)
        ws.write_number(r, 2, _round(p.run_hours, _PCT), book.num)


def _summary_sheet(book: _Book, fc: Forecast, outlook: Outlook | None, basis: str) -> None:
    u = fc.usage
    b = outlook.budget if outlook is not None else None
    ws = book.sheet("Summary", ("what", "value", "how"), (26, 18, 100))
    money_rows: list[tuple[str, float | None, str]] = [
        ("Quote", fc.quote_usd, fc.quote_basis),
        ("Planned", fc.planned_usd, fc.planned_basis),
        ("Real bill (forecast)", fc.total_usd, "sum of the Ledger sheet"),
        (
            "Budget (P90)",
            b.usd if b is not None else None,
            b.basis if b is not None else "not worked out",
        ),
    ]
    for r, (what, usd, how) in enumerate(money_rows, start=1):
        ws.write_string(r, 0, what)
        if usd is None:
            ws.write_string(r, 1, "n/a")
        else:
            ws.write_number(r, 1, _round(usd, _CENTS), book.usd)
        ws.write_string(r, 2, plain_text(how))
    facts = (
        ("Plan", u.name),
        ("Prices as of", u.as_of.isoformat()),
        ("Catalog", fc.catalog_version),
        ("Spend over time", basis),
        ("Written by", f"trainbill {__version__}"),
    )
    for r, (what, text) in enumerate(facts, start=len(money_rows) + 2):
        ws.write_string(r, 0, what)
        ws.write_string(r, 2, text)


def ledger_xlsx(result: Forecast, outlook: Outlook | None = None) -> bytes:
    """A workbook: Summary (with the budget when the outlook is given), Ledger (every line and a
    SUM total), By month, By day.

    Raises:
        TrainbillError: XlsxWriter is not installed (the ``report`` extra).
    """
    book = _Book(_xlsxwriter())
    spend = spend_of(result)
    _summary_sheet(book, result, outlook, spend.basis)
    _ledger_sheet(book, result)
    _periods_sheet(book, "By month", spend.months)
    _periods_sheet(book, "By day", spend.days)
    # Dated by the forecast's price date, not the clock: the same forecast gives the same bytes
    # (a report embedding the workbook, or a diff of two exports, shows only real changes).
    created = datetime.combine(result.usage.as_of, datetime.min.time())
    book.wb.set_properties(
        {
            "title": f"{result.usage.name}: ledger",
            "comments": f"trainbill {__version__}",
            "created": created,
        }
    )
    return book.close()
