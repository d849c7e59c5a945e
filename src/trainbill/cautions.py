"""A forecast's cautions: what a reader must know about a bill, each with its kind (for code)
and its text (for people), and the words a finance reader sees (``plain_words``).

``gather_cautions`` gathers every warning of a priced plan in the order a reader meets them: stale,
unpriced, unverified and stand-in prices, a reference region's rates, how the plan was read,
a what-if applied, the time model's caveats, recovery overload, bill calibration, an old
commitment rate. ``trainbill.forecasting`` re-exports the names.
"""

from __future__ import annotations

import re
from datetime import date
from enum import StrEnum

from trainbill._record import record
from trainbill.catalog import Catalog, Provenance
from trainbill.costs import bill_rates as bill_rates_driver
from trainbill.costs._arrays import some
from trainbill.costs._pricing import commitment_name, commitment_rate
from trainbill.ledger import CATEGORIES, Ledger
from trainbill.usage import Usage

__all__ = [
    "OVERLOADED_RECOVERY",
    "STALE_PRICE_DAYS",
    "Caution",
    "CautionKind",
    "gather_cautions",
    "plain_words",
]

#: Prices older than this are flagged in the output (issue #7: warn after 90 days).
STALE_PRICE_DAYS = 90

#: Share of the time spent recovering from failures/reclaims past which a warning says the
#: expected-value model is no longer a good description of the run.
OVERLOADED_RECOVERY = 0.5


class CautionKind(StrEnum):
    """What a forecast warning is about, so code reacts to a kind and never to a phrase."""

    #: The newest price point of the instance is older than ``STALE_PRICE_DAYS``.
    STALE_PRICES = "stale_prices"
    #: Ledger lines priced at $0 because the catalog has no price for them.
    UNPRICED = "unpriced"
    #: Ledger lines priced from a source the catalog marks UNVERIFIED (``Provenance``).
    UNVERIFIED_PRICES = "unverified_prices"
    #: Ledger lines priced at a catalog stand-in (``Provenance.STAND_IN``): no provider sells
    #: at that figure.
    STAND_IN = "stand_in"
    #: Some prices come from the provider's reference region, not the plan's.
    REFERENCE_REGION = "reference_region"
    #: How the plan was read: rounding, defaults, orchestrator and data-placement notes.
    PLAN = "plan"
    #: The time model's own caveats (memory fit, software age, parallel layout).
    TIME_MODEL = "time_model"
    #: A what-if applied to the plan (``Plan.whatif``): the bill is not of the plan as written.
    WHATIF = "whatif"
    #: Failures and reclaims so frequent that the expected-value bill understates.
    RECOVERY_OVERLOAD = "recovery_overload"
    #: Bill calibration (``trainbill.calibration``) changed or ignored something.
    CALIBRATION = "calibration"
    #: The commitment an existing plan holds is priced at a rate much older than the plan.
    COMMITMENT = "commitment"


@record
class Caution:
    """One forecast warning: its kind (for code) and its text (for people)."""

    kind: CautionKind
    text: str

    def as_dict(self) -> dict[str, str]:
        """JSON-ready form: ``plain`` is the text without flags, field keys or endpoints (what
        the report and the calculator show a finance reader; ``plain_words``)."""
        return {"kind": self.kind.value, "text": self.text, "plain": plain_words(self.text)}


# --- words for a finance reader (issue #42) -----------------------------------------------------

#: A command-line flag, a plan field key (``section.key``), an API endpoint or a command: what
#: an engineer acts on and a finance reader cannot. ``p5.48xlarge`` is not one (no section name).
_SECTIONS = (
    "run|model|cluster|purchase|prices|storage|data|checkpoint|evaluation|network|monitoring"
    "|reliability|defaults|time|resolved|services|extra_groups"
)
_KEY = rf"\b(?:{_SECTIONS})\.[a-z_*][\w*.]*"
_JARGON = re.compile(rf"(?<![\w-])--[a-z][\w-]*|{_KEY}|/v1/|'trainbill [a-z]|`trainbill")
_PAREN = re.compile(r"\s*\([^()]*\)")
_ASSIGN = re.compile(rf"({_KEY})\s*=\s*([\w.-]+)")


def _key_words(key: str) -> str:
    """``data.location`` → "data location"; ``run.deadline_hours`` → "run deadline hours"."""
    return key.replace("*", "").replace(".", " ").replace("_", " ").strip()


def plain_words(text: str) -> str:
    """``text`` for a finance reader: no flag, plan field key, endpoint or command.

    Parentheticals and ``;``-clauses that only tell an engineer where to act ("(run.hours)",
    "'trainbill prices update' or --catalog DIR with your rates replaces them") are left out;
    a sentence built on a key ("data.location = cross_az has no cost …") names the field in
    words ("data location cross_az has no cost …"). The whole text stays in the JSON ``text``
    and in the report's engineer's details.
    """
    if not _JARGON.search(text):
        return text
    out = _PAREN.sub(lambda m: "" if _JARGON.search(m.group(0)) else m.group(0), text)
    clauses = out.split("; ")
    kept = [c for c in clauses if not _JARGON.search(c)]
    out = "; ".join(kept) if kept else out
    out = _ASSIGN.sub(lambda m: f"{_key_words(m.group(1))} {m.group(2)}", out)
    out = re.sub(_KEY, lambda m: _key_words(m.group(0)), out)
    out = re.sub(r"(?:(?:POST|GET) )?/v1/\S*|(?<![\w-])--[a-z][\w-]*(?: [A-Z]{2,})?", "", out)
    out = re.sub(r"\s{2,}", " ", out).replace(" ,", ",").replace(" :", ":")
    out = out.replace("()", "").strip()
    return out[:1].upper() + out[1:] if text[:1].isupper() or re.match(_KEY, text) else out


def gather_cautions(
    usage: Usage, ledger: Ledger, catalog: Catalog, today: date | None
) -> tuple[Caution, ...]:
    """Every warning of a priced plan, in the order a reader meets them, each with its kind."""
    assert set(ledger.by_category()) == set(CATEGORIES)
    k = CautionKind
    found: tuple[tuple[CautionKind, tuple[str, ...]], ...] = (
        (k.STALE_PRICES, _stale_prices(usage, catalog, today)),
        (k.UNPRICED, _unpriced(ledger)),
        (k.UNVERIFIED_PRICES, _unverified(ledger)),
        (k.STAND_IN, _stand_in(ledger)),
        (k.REFERENCE_REGION, _reference_region(usage, ledger, catalog)),
        (k.PLAN, usage.warnings),  # how the plan was read (GPUs rounded up to whole nodes)
        (k.WHATIF, usage.whatif_notes),  # a what-if applied (``Plan.whatif``)
        (k.TIME_MODEL, usage.time.warnings),  # memory: fits only with recompute/offload
        (k.RECOVERY_OVERLOAD, _recovery_overload(usage)),
        (k.CALIBRATION, _bill_rates(usage, catalog)),  # overheads fitted from bills
        (k.COMMITMENT, _held_commitment_age(usage, catalog)),
    )
    return tuple(Caution(kind=kind, text=text) for kind, texts in found for text in texts)


def _held_commitment_age(usage: Usage, catalog: Catalog) -> tuple[str, ...]:
    """An existing commitment (``--savings-plan-covered``) priced at a rate dated more than a
    year before the plan: the commitment the organisation holds was bought at its own rate, and
    a 1-year term bought then has run out by the plan's date, so the line may be wrong."""
    p = usage.purchase
    if p.savings_plan == "none" or p.commitment != "existing" or not some(p.spot_fraction < 1):
        return ()
    rate = commitment_rate(catalog, usage)
    year = float(catalog.value("commitment.hours_per_year")) / 24.0  # days in a year of term
    if rate.effective_from is None or (usage.as_of - rate.effective_from).days <= year:
        return ()
    years = {"1yr": 1, "3yr": 3}[p.savings_plan]
    ended = (usage.as_of - rate.effective_from).days > years * year
    why = (
        f"a {p.savings_plan} term bought at that rate ended before the plan's date"
        if ended
        else "the commitment you hold may have been bought at another rate"
    )
    text = (
        f"the {commitment_name(usage)} held (purchase.commitment = existing) is priced at a rate "
        f"dated {rate.effective_from}, more than a year before the plan's price date "
        f"{usage.as_of}: {why}; give the rate you hold with --catalog DIR (a dated sp_* / "
        "compute_sp_* price point)"
    )
    return (text,)


def _stale_prices(usage: Usage, catalog: Catalog, today: date | None) -> tuple[str, ...]:
    ref_day = today or date.today()  # noqa: DTZ011 - a calendar date
    newest_compute = max(
        (
            p.effective_from
            for p in catalog.prices
            if p.item == usage.instance.instance and p.effective_from <= usage.as_of
        ),
        default=None,
    )
    if newest_compute is None or usage.as_of < ref_day:
        return ()
    age = (ref_day - newest_compute).days
    if age <= STALE_PRICE_DAYS:
        return ()
    text = (
        f"the newest {usage.instance.instance} price point is from {newest_compute} "
        f"({age} days old); run 'trainbill prices update {usage.provider}' for current prices"
    )
    return (text,)


def _unpriced(ledger: Ledger) -> tuple[str, ...]:
    unpriced = [ln.item for ln in ledger.lines if ln.provenance is Provenance.UNPRICED]
    if not unpriced:
        return ()
    text = (
        f"{len(unpriced)} line(s) are NOT PRICED ($0): the catalog has no price of the charging "
        f"provider for {', '.join(unpriced)} (each line's source names it); add your rates "
        "with --catalog DIR"
    )
    return (text,)


def _unverified(ledger: Ledger) -> tuple[str, ...]:
    """Lines whose price the catalog could not confirm against the provider's price list, with
    the share of the bill they carry, so a reader knows how much rests on them."""
    lines = [ln for ln in ledger.lines if ln.provenance is Provenance.UNVERIFIED]
    # Magnitudes: a credit (a commitment's discount at a proxy rate) rests on its rate as much
    # as a charge does; summed with its sign it read "$-53,693 (-26.5% of the bill)".
    usd = sum(abs(float(ln.cost_usd)) for ln in lines)
    if not lines or usd == 0:
        return ()
    total = float(ledger.total_usd)
    share = f" ({usd / total:.1%} of the bill)" if total > 0 else ""
    items = ", ".join(dict.fromkeys(ln.item for ln in lines))
    text = (
        f"${usd:,.0f}{share} is priced from sources the catalog marks UNVERIFIED (not checked "
        f"against the provider's price list): {items}; 'trainbill prices update' or --catalog "
        "DIR with your rates replaces them"
    )
    return (text,)


def _stand_in(ledger: Ledger) -> tuple[str, ...]:
    """Lines priced at a catalog stand-in (an H800 node at DeepSeek's assumed $2/GPU-hour, trn2
    at trn1's per-chip rate): a what-if figure, never a provider price, so the bill they carry
    is said with its share, like ``_unverified``'s."""
    lines = [ln for ln in ledger.lines if ln.provenance is Provenance.STAND_IN]
    if not lines:
        return ()
    usd = sum(float(ln.cost_usd) for ln in lines)
    total = float(ledger.total_usd)
    share = f" ({usd / total:.1%} of the bill)" if total > 0 else ""
    items = ", ".join(dict.fromkeys(ln.item for ln in lines))
    text = (
        f"${usd:,.0f}{share} is priced at a catalog STAND-IN, not a price any provider "
        f"publishes or sells at: {items} (each line's source says what it stands in for); "
        "--catalog DIR with your contract or Capacity Block rate replaces it"
    )
    return (text,)


def _reference_region(usage: Usage, ledger: Ledger, catalog: Catalog) -> tuple[str, ...]:
    """Lines priced at the provider's reference region's rates for want of a price point in the
    plan's region: which, and how much of the bill, named like ``_unverified`` (once "some
    prices come from the provider's reference region" hid that the GPUs were among them)."""
    lines = [ln for ln in ledger.lines if ln.provenance is Provenance.REFERENCE_REGION]
    if not lines:
        return ()
    usd = sum(float(ln.cost_usd) for ln in lines)
    total = float(ledger.total_usd)
    ref = f"{catalog.reference_region(usage.provider)} ({usage.provider}'s reference region)"
    if len(lines) == len(ledger.lines):
        what = f"every line of the bill (${usd:,.0f}) is priced at the rates of {ref}"
        missing = f"the catalog has no {usage.region} price points"
    else:
        share = f" ({usd / total:.1%} of the bill)" if total > 0 else ""
        items = ", ".join(dict.fromkeys(ln.item for ln in lines))
        what = f"${usd:,.0f}{share} is priced at the rates of {ref}"
        # Not "no <cluster region> point": a transfer is billed in the region it leaves.
        missing = f"the catalog has no price point in the region that bills {items}"
    text = (
        f"{what}: {missing}; prices differ by region, so 'trainbill prices update "
        f"{usage.provider}' or --catalog DIR with {usage.region} rates replaces them"
    )
    return (text,)


def _bill_rates(usage: Usage, catalog: Catalog) -> tuple[str, ...]:
    """One note per bill calibration on the catalog: which categories its rates replaced."""
    used = bill_rates_driver.applied(usage, catalog)
    return tuple(
        f"overheads calibrated from bills for {rates.period}: "
        f"{', '.join(sorted(c for c in rates.usd_per_node_hour if c in used))} replaced"
        for rates in catalog.bill_rates
    )


def _recovery_overload(usage: Usage) -> tuple[str, ...]:
    """Failures and reclaims are priced at their expected count, each losing half an interval
    plus a restart. That is sound while events are rare; when one arrives every few restarts
    the run spends its time recovering (and at one per recovery it never progresses), so the
    expected-value bill understates: say so."""
    exposed = usage.exposed_hours
    per_hour = (
        (usage.reliability.failure_events + usage.reliability.reclaim_events) / exposed
        if exposed > 0
        else 0.0
    )
    busy = per_hour * usage.lost_hours_each
    if busy < OVERLOADED_RECOVERY:
        return ()
    text = (
        f"failures and spot reclaims arrive every {60.0 / per_hour:,.0f} min and each costs "
        f"{usage.lost_hours_each:.2g} h of lost work and restart ({busy:.0%} of the time): the "
        "expected-value estimate understates this run; use fewer GPUs, faster restarts "
        "(reliability.restart_hours, orchestrator) or shorter checkpoint intervals"
    )
    return (text,)
