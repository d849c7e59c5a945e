"""Audit a claimed bill line by line: what each amount buys at list price, and whether it can.

A claim (an article's ledger, a vendor's quote, a finance estimate) is a list of amounts by
ledger category. Each amount is divided by the catalog's price for that category on the run's
own plan, priced by ``trainbill.forecast``: the implied quantity is what the money buys. The
verdict compares it with what the plan produces:

* **impossible**: the line contradicts itself or the price list. Its quantity × unit price is
  not its amount; its percentage of the quote is not its amount; or its stated quantity costs
  more than at the dearest list price of its unit (no purchase option charges more than
  on-demand list; time lines are priced at on-demand for every node).
* **implausible**: the implied quantity is more than ``IMPLAUSIBLE_RATIO`` × the plan's own
  forecast quantity in that unit (the claim needs an input the plan does not state), or less
  than 1 / ``IMPLAUSIBLE_RATIO`` of it (the claim leaves out what the plan's inputs cost): an
  understated line is flagged as loudly as an inflated one, and the arithmetic says by how
  much. The quote, being instances × on-demand list price × planned hours, is held to the
  plan's own quote within ``QUOTE_TOLERANCE`` either way ("50 P4d × 48 h ≈ $40k" is $78,654
  at list price: understated by $38,654, 49 %).
* **consistent**: otherwise.

The dearest price of a unit is used on purpose: it gives the *least* quantity the amount could
buy, so a claim is never called implausible because a cheaper option was assumed.

Pure: the caller reads the claims file and the plan (``claims_from_dict`` takes their parsed
form); only the catalog and the forecast are consulted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.costs._pricing import cluster_rate, instance_rate
from trainbill.errors import SpecError, finite_number, shown_value
from trainbill.forecasting import Forecast
from trainbill.ledger import CATEGORIES, LineItem

__all__ = [
    "IMPLAUSIBLE_RATIO",
    "QUOTE_TOLERANCE",
    "TOLERANCE",
    "ClaimAudit",
    "ClaimLine",
    "ClaimedBill",
    "LineAudit",
    "audit_claims",
    "claims_from_dict",
    "quantity_words",
]

#: A claimed quantity this many times what the plan's own inputs produce needs an input the
#: plan does not state. 2 is above the time model's P90 error on whole runs (×1.97 on clusters of
#: up to 1,024 GPUs, ``time.error_band.small_cluster_p90``; ×1.78 over all runs,
#: ``time.error_band.whole_run_p90``), so the model's own error cannot reach it.
IMPLAUSIBLE_RATIO = 2.0
#: Relative slack for arithmetic checks: claims round to dollars and whole percentages.
TOLERANCE = 0.01
#: How far a claimed quote may sit from the plan's (instances × on-demand list × planned hours)
#: either way and still be the same quote: rounding to two significant figures ("≈ $40k")
#: moves a number by at most 5 % (10.5 → 10), so a quote further off is another figure.
QUOTE_TOLERANCE = 0.05
#: Half a percentage point: a whole-number percentage is rounded by at most this.
_PERCENT_ROUNDING = 0.5
_TIME_UNITS = ("cluster-hour", "instance-hour", "chip-hour")
_LINE_KEYS = (
    "category",
    "item",
    "amount_usd",
    "percent",
    "quantity",
    "unit",
    "unit_price_usd",
    "priced_as",
    "note",
)
_TOP_KEYS = ("name", "source", "quote_usd", "total_usd", "plan", "lines")


@record
class ClaimLine:
    """One claimed amount; ``number`` is its 1-based position in the file's ``[[lines]]``."""

    number: int
    category: str
    item: str
    amount_usd: float
    percent: float | None = None
    quantity: float | None = None
    unit: str | None = None
    unit_price_usd: float | None = None
    priced_as: str | None = None
    note: str = ""


@record
class ClaimedBill:
    """A claimed bill: an optional quote (the base of percentages), lines and a total."""

    name: str
    source: str
    quote_usd: float | None
    total_usd: float | None
    lines: tuple[ClaimLine, ...]


@record
class LineAudit:
    """A claimed line checked against the list price of its category on the claim's plan."""

    line: ClaimLine
    priced_as: str
    unit: str
    unit_price_usd: float
    price_source: str
    implied_quantity: float
    forecast_quantity: float
    ratio: float | None
    verdict: str
    arithmetic: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        ln = self.line
        return {
            "line": ln.number,
            "category": ln.category,
            "item": ln.item,
            "amount_usd": ln.amount_usd,
            "percent": ln.percent,
            "quantity": ln.quantity,
            "unit_claimed": ln.unit,
            "unit_price_claimed_usd": ln.unit_price_usd,
            "priced_as": self.priced_as,
            "unit": self.unit,
            "unit_price_usd": self.unit_price_usd,
            "price_source": self.price_source,
            "implied_quantity": self.implied_quantity,
            "forecast_quantity": self.forecast_quantity,
            "ratio_to_forecast": self.ratio,
            "verdict": self.verdict,
            "arithmetic": self.arithmetic,
        }


@record
class ClaimAudit:
    """Every line's verdict and whether the lines add up to the claimed total."""

    claim: ClaimedBill
    lines: tuple[LineAudit, ...]
    lines_usd: float
    percent_sum: float | None
    lines_percent_of_quote: float | None
    gap_percent_of_quote: float | None
    unexplained_usd: float | None
    adds_up: bool | None
    total_arithmetic: str

    @property
    def impossible(self) -> tuple[LineAudit, ...]:
        """The lines that cannot be true; the CLI exits non-zero when there is any."""
        return tuple(a for a in self.lines if a.verdict == "impossible")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        c = self.claim
        return {
            "name": c.name,
            "source": c.source,
            "quote_usd": c.quote_usd,
            "total_usd": c.total_usd,
            "lines": [a.as_dict() for a in self.lines],
            "lines_usd": self.lines_usd,
            "percent_sum": self.percent_sum,
            "lines_percent_of_quote": self.lines_percent_of_quote,
            "gap_percent_of_quote": self.gap_percent_of_quote,
            "unexplained_usd": self.unexplained_usd,
            "adds_up": self.adds_up,
            "total_arithmetic": self.total_arithmetic,
            "impossible_lines": [a.line.number for a in self.impossible],
        }


# --- parsing ----------------------------------------------------------------------------------


def _number(value: Any, *, source: str, field: str, allow_zero: bool = True) -> float:
    """A finite, non-negative number or a one-line error naming the field."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = (
            f"{value!r} is not a number (USD amounts and quantities are plain numbers, e.g. 14632)"
        )
        raise SpecError(msg, source=source, field=field)
    x = finite_number(value)
    if x is None or x < 0 or (x == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise SpecError(
            f"must be a finite number {bound} (got {shown_value(value)})",
            source=source,
            field=field,
        )
    return x


def _text(value: Any, *, source: str, field: str) -> str:
    if not isinstance(value, str):
        raise SpecError(f"must be text (got {value!r})", source=source, field=field)
    return value


def _line(raw: Any, number: int, quote: float | None, source: str) -> ClaimLine:
    where = f"lines[{number}]"
    if not isinstance(raw, Mapping):
        raise SpecError(
            "must be a table ([[lines]] with category and amount_usd)", source=source, field=where
        )
    unknown = sorted(set(raw) - set(_LINE_KEYS))
    if unknown:
        msg = f"unknown key {unknown[0]!r}; allowed: {', '.join(_LINE_KEYS)}"
        raise SpecError(msg, source=source, field=where)
    if "category" not in raw:
        raise SpecError(
            f"no category; allowed: {', '.join(CATEGORIES)}", source=source, field=where
        )
    category = _text(raw["category"], source=source, field=f"{where}.category")
    if category not in CATEGORIES:
        from trainbill.errors import suggest

        msg = (
            f"unknown category {category!r}; allowed: "
            f"{', '.join(CATEGORIES)}.{suggest(category, CATEGORIES)}"
        )
        raise SpecError(msg, source=source, field=f"{where}.category")

    def opt(key: str) -> float | None:
        return _number(raw[key], source=source, field=f"{where}.{key}") if key in raw else None

    percent = opt("percent")
    amount = opt("amount_usd")
    if amount is None:
        if percent is None:
            raise SpecError(
                "give amount_usd (USD) or percent (of quote_usd)", source=source, field=where
            )
        if quote is None:
            msg = "percent needs quote_usd at the top of the file: a percentage of what?"
            raise SpecError(msg, source=source, field=f"{where}.percent")
        amount = quote * percent / 100.0
    if percent is not None and quote is None:
        msg = "percent needs quote_usd at the top of the file: a percentage of what?"
        raise SpecError(msg, source=source, field=f"{where}.percent")
    if percent is not None and quote is not None and not math.isfinite(quote * percent / 100.0):
        msg = f"{percent:g}% of quote_usd {quote:g} is beyond any bill"
        raise SpecError(msg, source=source, field=f"{where}.percent")
    quantity = opt("quantity")
    unit = _text(raw["unit"], source=source, field=f"{where}.unit") if "unit" in raw else None
    if quantity is not None and unit is None:
        raise SpecError(
            'a quantity needs its unit (e.g. unit = "cluster-hour")',
            source=source,
            field=f"{where}.unit",
        )
    return ClaimLine(
        number=number,
        category=category,
        item=_text(raw.get("item", category), source=source, field=f"{where}.item"),
        amount_usd=amount,
        percent=percent,
        quantity=quantity,
        unit=unit,
        unit_price_usd=opt("unit_price_usd"),
        priced_as=_text(raw["priced_as"], source=source, field=f"{where}.priced_as")
        if "priced_as" in raw
        else None,
        note=_text(raw.get("note", ""), source=source, field=f"{where}.note"),
    )


def claims_from_dict(doc: Mapping[str, Any], *, source: str) -> ClaimedBill:
    """Validate a parsed claims file; every error names ``source`` and the line (``lines[N]``).

    The plan (``plan``: a path or an inline table) is the caller's to read: it is I/O.
    """
    unknown = sorted(set(doc) - set(_TOP_KEYS))
    if unknown:
        msg = f"unknown key {unknown[0]!r}; allowed: {', '.join(_TOP_KEYS)}"
        raise SpecError(msg, source=source, field=unknown[0])
    quote = (
        _number(doc["quote_usd"], source=source, field="quote_usd", allow_zero=False)
        if "quote_usd" in doc
        else None
    )
    total = (
        _number(doc["total_usd"], source=source, field="total_usd", allow_zero=False)
        if "total_usd" in doc
        else None
    )
    raw_lines = doc.get("lines", [])
    # A quote alone is a claim too ("50 P4d × 48 h ≈ $40k"): it is audited against the plan's.
    if not isinstance(raw_lines, list) or (not raw_lines and quote is None):
        raise SpecError(
            "no claimed lines: add [[lines]] tables (category, amount_usd), or a quote_usd",
            source=source,
            field="lines",
        )
    lines = tuple(_line(raw, i, quote, source) for i, raw in enumerate(raw_lines, start=1))
    return ClaimedBill(
        name=_text(doc.get("name", source), source=source, field="name"),
        source=_text(doc.get("source", ""), source=source, field="source"),
        quote_usd=quote,
        total_usd=total,
        lines=lines,
    )


# --- audit ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Price:
    label: str
    unit: str
    usd: float
    source: str
    forecast_quantity: float


def _reference(fc: Forecast, catalog: Catalog, line: ClaimLine) -> _Price:
    """The list price the line's amount is divided by: the named forecast line (``priced_as``,
    matched by prefix) or the category's dearest; time at on-demand for every node."""
    lines = fc.ledger.in_category(line.category)
    if line.priced_as is not None:
        named = [ln for ln in fc.ledger.lines if ln.item.lower().startswith(line.priced_as.lower())]
        if not named:
            items = ", ".join(sorted({ln.item for ln in fc.ledger.lines}))
            msg = f"{line.priced_as!r} matches no line of the plan's forecast; its lines: {items}"
            raise SpecError(msg, field=f"lines[{line.number}].priced_as")
        ref = named[0]
    else:
        if not lines and line.category not in (
            "data_transfer",
            "networking",
            "storage",
            "monitoring",
            "discount",
            # A service premium (EKS control plane, HyperPod's ml.* rate), not lost node-hours:
            # a raw EC2 plan has none, and pricing the claim as instance-hours called it
            # consistent.
            "orchestration",
        ):
            # Time categories the plan has no line for (no failures on a tiny run) still cost
            # node-hours: price them like the compute lines.
            lines = fc.ledger.in_category("compute")
        if not lines:
            msg = (
                f"the plan's forecast has no {line.category} line to price this claim by; name "
                "one of its lines with priced_as (lines: "
                f"{', '.join(ln.item for ln in fc.ledger.lines)})"
            )
            raise SpecError(msg, field=f"lines[{line.number}].category")
        ref = max(lines, key=lambda ln: _dearest(fc, catalog, ln)[0])
    usd, source = _dearest(fc, catalog, ref)
    same_unit = [ln for ln in fc.ledger.in_category(ref.category) if ln.unit == ref.unit]
    quantity = sum(ln.quantity for ln in same_unit) if line.priced_as is None else ref.quantity
    return _Price(label=ref.item, unit=ref.unit, usd=usd, source=source, forecast_quantity=quantity)


def _dearest(fc: Forecast, catalog: Catalog, ln: LineItem) -> tuple[float, str]:
    """A line's unit price, except that time (instance- or cluster-hours) is priced at on-demand
    for every node, the most any purchase option charges for it."""
    if ln.unit not in _TIME_UNITS:
        return ln.unit_price_usd, ln.source
    u = fc.usage
    od = instance_rate(catalog, u, "on_demand")
    listed = od.usd
    if ln.unit == "cluster-hour":
        # Every node at on-demand: the pricing module's cluster-hour with no node on spot.
        listed, _ = cluster_rate(catalog, u.with_values({"purchase.spot_fraction": 0.0}))
    usd = max(listed, ln.unit_price_usd)
    many = ln.unit == "cluster-hour" and u.nodes > 1
    what = f"{u.nodes} × {u.instance.instance} " if many else f"{u.instance.instance} "
    return usd, f"{what}at ${od.usd:,.2f}/h {od.words} ({od.source})"


def quantity_words(x: float, unit: str) -> str:
    """A quantity in words people check by hand: ``36,580,000 × 1000 requests (36.6 billion)``."""
    text = f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.2f}"
    if unit.startswith("1000 "):
        n = x * 1000
        scale = next(
            ((s, w) for s, w in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")) if n >= s),
            None,
        )
        words = (
            f" ({n / scale[0]:.3g} {scale[1]} {unit[5:]})" if scale else f" ({n:,.0f} {unit[5:]})"
        )
        return f"{text} × {unit}{words}"
    return f"{text} {unit}"


def _price(usd: float) -> str:
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.4g}"


def _check_unit(fc: Forecast, line: ClaimLine, ref: _Price) -> None:
    """A quantity in another unit than the line is priced in cannot be held against the price:
    without this the quantity check was skipped and an impossible line read as implausible.
    Where another line of the category is priced in the claim's unit, the error names it."""
    if line.quantity is not None and line.unit != ref.unit:
        others = [ln.item for ln in fc.ledger.in_category(line.category) if ln.unit == line.unit]
        hint = (
            f", or price it by a line in {line.unit} with priced_as = "
            + " or ".join(f'"{item}"' for item in dict.fromkeys(others))
            if others and line.priced_as is None
            else ""
        )
        msg = (
            f"unit {line.unit!r} is not the unit the line is priced in ({ref.unit}, "
            f"{ref.label}): give the quantity in {ref.unit}s{hint}, or drop quantity and unit"
        )
        raise SpecError(msg, field=f"lines[{line.number}].unit")


def _audit_line(
    fc: Forecast,
    catalog: Catalog,
    line: ClaimLine,
    quote: float | None,
    *,
    plan_quote: Forecast | None = None,
) -> LineAudit:
    """One line's verdict; with ``plan_quote`` the line is the claimed quote, held to that
    forecast's own quote (``_quote_verdict``) rather than to the 2× band of a line."""
    ref = _reference(fc, catalog, line)
    _check_unit(fc, line, ref)
    amount = line.amount_usd
    implied = amount / ref.usd if ref.usd > 0 else math.inf
    ratio = implied / ref.forecast_quantity if ref.forecast_quantity > 0 else None
    steps = [
        (
            f"${amount:,.0f} / {_price(ref.usd)} per {ref.unit} ({ref.label}) = "
            f"{quantity_words(implied, ref.unit)}"
        )
    ]
    if ref.unit == "GB" and fc.usage.wall_hours > 0:
        # Bytes through one meter in the run's time: what a gateway or link would have carried.
        gbps = implied * 8 / (fc.usage.wall_hours * 3600)
        steps.append(
            f"{gbps:,.3g} Gbit/s sustained over the run's {fc.usage.wall_hours:,.1f} h wall-clock"
        )
    impossible: list[str] = []
    if line.percent is not None and quote is not None:
        pct = 100.0 * amount / quote
        if abs(pct - line.percent) > _PERCENT_ROUNDING + TOLERANCE * line.percent:
            impossible.append(
                f"{line.percent:g}% of the ${quote:,.0f} quote is "
                f"${quote * line.percent / 100:,.0f}, not ${amount:,.0f} ({pct:.1f}%)"
            )
    if line.quantity is not None and line.unit_price_usd is not None:
        product = line.quantity * line.unit_price_usd
        if not math.isclose(product, amount, rel_tol=TOLERANCE, abs_tol=1.0):
            impossible.append(
                f"{line.quantity:,.6g} {line.unit} × {_price(line.unit_price_usd)} = "
                f"${product:,.0f}, not ${amount:,.0f}"
            )
    if line.quantity is not None and line.unit == ref.unit:
        most = line.quantity * ref.usd
        if amount > most * (1 + TOLERANCE):
            impossible.append(
                f"{line.quantity:,.6g} {ref.unit} cost at most ${most:,.0f} at the dearest list "
                f"price ({_price(ref.usd)}); ${amount:,.0f} is {amount / most:.1f}× that and "
                f"buys {quantity_words(implied, ref.unit)}"
            )
    if (
        line.unit_price_usd is not None
        and line.unit == ref.unit
        and line.unit_price_usd > ref.usd * (1 + TOLERANCE)
    ):
        impossible.append(
            f"the claimed {_price(line.unit_price_usd)} per {ref.unit} is above the dearest list "
            f"price {_price(ref.usd)}"
        )
    if ratio is not None:
        steps.append(
            f"{ratio:,.3g}× the plan's forecast {quantity_words(ref.forecast_quantity, ref.unit)}"
        )
    else:
        steps.append("the plan's forecast has none")
    verdict, why = _verdict(impossible, ratio, ref, amount)
    if plan_quote is not None and not impossible and plan_quote.quote_usd > 0:
        verdict, why = _quote_verdict(amount, plan_quote.quote_usd, plan_quote.quote_basis)
    return LineAudit(
        line=line,
        priced_as=ref.label,
        unit=ref.unit,
        unit_price_usd=ref.usd,
        price_source=ref.source,
        implied_quantity=implied,
        forecast_quantity=ref.forecast_quantity,
        ratio=ratio,
        verdict=verdict,
        arithmetic=f"{'; '.join(steps)}: {why}",
    )


def _verdict(
    impossible: list[str], ratio: float | None, ref: _Price, amount: float
) -> tuple[str, str]:
    """A line's verdict and why: impossible, then outside the 2× band either way, else
    consistent (an understated line as loud as an inflated one, with the dollars it leaves out)."""
    if impossible:
        return "impossible", "; ".join(impossible)
    if ratio is None or ratio > IMPLAUSIBLE_RATIO:
        return "implausible", (
            f"more than {IMPLAUSIBLE_RATIO:g}× what the plan's inputs produce: the claim needs "
            "an input the plan does not state"
        )
    if ratio < 1.0 / IMPLAUSIBLE_RATIO:
        forecast_usd = ref.forecast_quantity * ref.usd
        return "implausible", (
            f"UNDERSTATED: less than 1/{IMPLAUSIBLE_RATIO:g} of what the plan's inputs produce "
            f"({quantity_words(ref.forecast_quantity, ref.unit)} × {_price(ref.usd)} = "
            f"${forecast_usd:,.0f}; the claim is ${forecast_usd - amount:,.0f} less): it leaves "
            "out part of what the plan's inputs cost"
        )
    return (
        "consistent",
        f"within {IMPLAUSIBLE_RATIO:g}× of what the plan's inputs produce",
    )


def _quote_verdict(claimed: float, plan_quote: float, basis: str) -> tuple[str, str]:
    """The claimed quote against the plan's own quote (instances × on-demand list × planned
    hours), both ways: a quote is arithmetic on list prices, so one below the plan's hides cost
    as surely as one above it inflates it, and the verdict says which and by how much."""
    r = claimed / plan_quote
    at_list = f"the plan's quote at list price is {basis}"
    if abs(r - 1.0) <= QUOTE_TOLERANCE:
        return "consistent", f"within {QUOTE_TOLERANCE:.0%} of the plan's quote: {at_list}"
    gap = claimed - plan_quote
    side = "UNDERSTATED" if gap < 0 else "OVERSTATED"
    return "implausible", (
        f"{side} by ${abs(gap):,.0f} ({abs(gap) / plan_quote:.0%} of the list-price quote): "
        f"{at_list}; the claimed ${claimed:,.0f} is {r:.3g}× that (more than {QUOTE_TOLERANCE:.0%} "
        "off either way is another figure, not a rounding)"
    )


def audit_claims(claim: ClaimedBill, fc: Forecast, catalog: Catalog) -> ClaimAudit:
    """Each line against list prices on the claim's plan (``fc``), then the sum against the total.

    ``quote_usd`` counts as a compute line (the quote) when the total is checked: a claimed
    bill is the quote plus its hidden costs.
    """
    quote = claim.quote_usd
    lines = list(claim.lines)
    audits = [_audit_line(fc, catalog, ln, quote) for ln in lines]
    if quote is not None:
        q = ClaimLine(number=0, category="compute", item="the quote", amount_usd=quote)
        audits.insert(0, _audit_line(fc, catalog, q, None, plan_quote=fc))
    lines_usd = sum(ln.amount_usd for ln in lines)
    percents = [ln.percent for ln in lines if ln.percent is not None]
    percent_sum = sum(percents) if percents else None
    lines_pct = 100.0 * lines_usd / quote if quote else None
    gap_pct = (
        100.0 * (claim.total_usd - quote) / quote if quote and claim.total_usd is not None else None
    )
    base = quote or 0.0
    if claim.total_usd is None:
        unexplained, adds_up = None, None
        total_text = f"lines ${lines_usd:,.0f}" + (
            f" + quote ${base:,.0f} = ${base + lines_usd:,.0f}" if quote else ""
        )
        total_text += "; no total_usd claimed"
    else:
        unexplained = claim.total_usd - base - lines_usd
        adds_up = math.isclose(base + lines_usd, claim.total_usd, rel_tol=TOLERANCE, abs_tol=1.0)
        head = (
            f"quote ${base:,.0f} + lines ${lines_usd:,.0f}" if quote else f"lines ${lines_usd:,.0f}"
        )
        total_text = (
            f"{head} = ${base + lines_usd:,.0f} vs the claimed total ${claim.total_usd:,.0f}: "
        )
        if adds_up:
            total_text += "adds up"
        else:
            total_text += (
                f"does not add up: ${unexplained:,.0f} "
                f"({100 * unexplained / claim.total_usd:.0f}% of the total) is in no line"
            )
        if quote and percent_sum is not None and gap_pct is not None:
            total_text += (
                f"; the stated percentages sum to {percent_sum:g}% of the quote against a "
                f"{gap_pct:.0f}% gap between quote and total"
            )
    return ClaimAudit(
        claim=claim,
        lines=tuple(audits),
        lines_usd=lines_usd,
        percent_sum=percent_sum,
        lines_percent_of_quote=lines_pct,
        gap_percent_of_quote=gap_pct,
        unexplained_usd=unexplained,
        adds_up=adds_up,
        total_arithmetic=total_text,
    )
