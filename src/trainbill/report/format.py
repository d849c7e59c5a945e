"""Number formatting for people: whole dollars with separators, hours, percentages.

Amounts stay unrounded floats everywhere else (``trainbill.ledger``); rounding happens only
here, at the last step before a human reads them.
"""

from __future__ import annotations

import math
import re

from trainbill.forecasting import HIDDEN_LABELS

__all__ = [
    "CATEGORY_NAMES",
    "category_name",
    "hours",
    "money",
    "money_change",
    "money_precise",
    "number",
    "percent",
    "plain_text",
]

#: Ledger categories in the words of the waterfall (``HIDDEN_LABELS``), except the two whose
#: hidden-cost label names only a part of the category: compute and discount lines hold the
#: planned compute and commitment savings too.
CATEGORY_NAMES: dict[str, str] = {
    **HIDDEN_LABELS,
    "compute": "GPU instances (and head or login nodes)",
    "discount": "commitments (Savings Plans, reservations)",
}


def category_name(category: str) -> str:
    """A ledger category for people (``sync_stall`` → "GPUs waiting on gradient sync …")."""
    name = CATEGORY_NAMES.get(category, category.replace("_", " "))
    return name[:1].upper() + name[1:]


# Catalog sources cite the project's own research notes ("REFERENCE §4.1 [SKY-AWS-a]",
# "../shared/data/..."), which a reader of the report does not have: the named public source
# next to them is what the reader can check, so only the internal label goes.
_REF = (
    r"REFERENCE-[\w.-]+\.md(?:\s*§[\d.]+)?|REFERENCE "
    r"§[\d.]+(?:,\s*§[\d.]+)*(?:\s*\[[^\]]*\](?:,\s*\[[^\]]*\])*)?(?:\s*'[^']*')?(?:\s+modell?ing "
    r"note)?"
)
_PATH = r"(?:also\s+)?\.\./shared/[\w./-]*[\w/](?:\s*§[\d.]+)?"
_TOKEN = f"(?:{_REF}|{_PATH})"
_STRIP: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"\s*\(\s*{_TOKEN}\s*\)"), ""),  # a whole parenthetical
    (re.compile(rf"\(\s*{_TOKEN}\s*[;,]\s*"), "("),  # first inside parentheses
    (re.compile(rf"\s*[;,]\s*{_TOKEN}(?=\s*[);,]|\s*$)"), ""),  # a list item
    (re.compile(rf"{_TOKEN}\s*[;,]\s*"), ""),  # first of a list
)
_LEFT_PATH = re.compile(r"(?:\.\./)+shared/(?:[\w.-]+/)*([\w.-]+)")


def plain_text(text: str) -> str:
    """``text`` without the project's internal reference labels and ``../shared`` paths.

    A path left inside a sentence ("Highest MFU in ../shared/…/published_runs.csv: …") keeps
    its file name so the sentence still reads.
    """
    for pattern, repl in _STRIP:
        text = pattern.sub(repl, text)
    text = re.sub(_REF, "", text)
    text = _LEFT_PATH.sub(r"\1", text)
    return re.sub(r"\s{2,}", " ", text).replace("()", "").strip()


def money(usd: float) -> str:
    """Whole dollars with thousands separators: ``$226,529``; negatives as ``-$1,234``."""
    if not math.isfinite(usd):
        return "n/a"
    whole = round(usd)
    if whole < 0:
        return f"-${-whole:,}"
    return f"${whole:,}"


def money_change(usd: float) -> str:
    """A signed change in whole dollars (``+$8,642``, ``-$83,704``); a change under half a dollar
    that is not zero reads ``+<$1``, never ``+$0`` next to a cost that exists."""
    if not math.isfinite(usd):
        return "n/a"
    sign = "-" if usd < 0 else "+"
    if usd != 0 and round(abs(usd)) == 0:
        return f"{sign}<$1"
    return f"{sign}${round(abs(usd)):,}"


def money_precise(usd: float) -> str:
    """Unit prices keep their cents (``$0.30``, not ``$0.3``) and, below a dollar, four
    significant digits for per-GB and per-request prices (``$0.0125``, ``$0.0004``)."""
    if not math.isfinite(usd):
        return "n/a"
    sign = "-" if usd < 0 else ""
    a = abs(usd)
    if a >= 1 or a == 0:
        return f"{sign}${a:,.2f}"
    text = f"{a:.{max(2, 3 - math.floor(math.log10(a)))}f}".rstrip("0")
    decimals = len(text.split(".")[1])
    return f"{sign}${text}{'0' * (2 - decimals) if decimals < 2 else ''}"


def number(x: float, digits: int = 2) -> str:
    """A quantity with separators and at most ``digits`` decimals (trailing zeros dropped)."""
    if not math.isfinite(x):
        return "n/a"
    text = f"{x:,.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def hours(h: float) -> str:
    """Hours with one decimal and, past two days, the equivalent in days."""
    if not math.isfinite(h):
        return "n/a"
    if h >= 48:
        return f"{h:,.1f} h ({h / 24:,.1f} days)"
    return f"{h:,.1f} h"


def percent(p: float, digits: int = 1) -> str:
    """A percentage given in percent units (``12.5`` → ``12.5%``)."""
    if not math.isfinite(p):
        return "n/a"
    return f"{p:,.{digits}f}%"
