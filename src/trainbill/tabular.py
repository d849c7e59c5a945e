"""Rows for spreadsheets: the one place a CSV (or, later, XLSX) cell is made safe and readable.

Two rules every table trainbill writes for people follows:

* **No formula injection** (OWASP "CSV Injection"): a text cell that starts with ``=``, ``+``,
  ``-``, ``@``, a tab or a carriage return is run as a formula by Excel, LibreOffice and Google
  Sheets. Text reaches our tables from places the user does not fully control (a catalog
  overlay's ``source``, an imported plan's name), so such a cell is prefixed with a single quote,
  which spreadsheets show as text. Numbers stay numbers: only ``str`` cells are touched, and a
  negative amount is written as a number, not as text starting with ``-``.
* **No float noise**: ``113264.63999999998`` is written ``113264.64``. Floats are written with
  12 significant digits, which keeps every cent of any bill below ten billion dollars and
  drops the binary-representation tail (a double carries 15-17).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["cell", "to_csv"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_DIGITS = 12


def cell(value: Any) -> Any:
    """A value as a spreadsheet cell: text neutralised, floats without noise, others as is."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return float(f"{value:.{_DIGITS}g}")
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def to_csv(rows: Iterable[Mapping[str, Any]], fields: Sequence[str]) -> str:
    """CSV text (header first, LF line ends) of ``rows``' ``fields``, every cell through
    ``cell``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(fields)
    for row in rows:
        writer.writerow([_text(cell(row.get(f))) for f in fields])
    return buf.getvalue()


def _text(value: Any) -> Any:
    # csv writes floats with repr(); after ``cell`` rounding that is already the short form.
    return "" if value is None else value
