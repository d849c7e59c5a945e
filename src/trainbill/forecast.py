"""Forecast: the plan's itemized real bill next to the naive quote.

The quote is what a planning meeting multiplies: instances × on-demand list price × planned
hours. The real bill is every driver's lines. Their ratio is the multiplier the seed article
is about; ``Forecast.as_dict`` is the JSON contract of ``trainbill forecast --json``.

Three numbers are kept apart, because a plan that runs half on spot can have a real bill below
its on-demand quote and still hide tens of thousands of dollars: the **quote** (on-demand list),
the **planned** bill (the quote's node-hours at the plan's own purchase mix: spot share at the
spot rate, Savings Plan coverage at its rate) and the **real** bill. ``planned − quote`` is what
the purchase mix saves; ``real − planned`` is what the quote hides (``hidden_by_category``).
The P90 budget and the ranked actions need the simulation and the planner, which import this
module, so they are worked out in ``trainbill.headline`` and returned beside the forecast
(``headline.Advised``), never inside it: this module knows nothing of them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from enum import StrEnum
from typing import Any

from trainbill._record import record
from trainbill.catalog import Catalog, Provenance
from trainbill.costs import bill_rates as bill_rates_driver
from trainbill.costs import compute as compute_driver
from trainbill.costs import discount as discount_driver
from trainbill.costs import estimate
from trainbill.costs._arrays import some
from trainbill.costs._pricing import commitment_name, commitment_rate, instance_rate
from trainbill.errors import SpecError
from trainbill.ledger import CATEGORIES, Ledger
from trainbill.spec import Plan
from trainbill.timemodel import error_band_quantiles
from trainbill.usage import Usage, usage_for

__all__ = [
    "BUDGET_LABEL",
    "HIDDEN_LABELS",
    "RANGE_LABEL",
    "STALE_PRICE_DAYS",
    "Caution",
    "CautionKind",
    "ErrorBand",
    "Forecast",
    "Quote",
    "Step",
    "error_band",
    "forecast",
    "forecast_usage",
    "plain_words",
    "quote_of",
    "versus_planned",
    "versus_quote",
]

#: The one name of the one P90: the budget, the P90 of simulated runs (``headline.budget``).
BUDGET_LABEL = "budget (P90 of simulated runs)"
#: The time model's band, by a name that is not a percentile (issue #42).
RANGE_LABEL = "GPU-hours range, 80 % of similar runs"

#: Prices older than this are flagged in the output (issue #7: warn after 90 days).
STALE_PRICE_DAYS = 90


#: Hidden costs in words a budget approver reads (keys: ``ledger.CATEGORIES``). The compute
#: and discount entries are what remains of those categories once the planned part is taken out.
HIDDEN_LABELS: Mapping[str, str] = {
    "compute": "extra instance groups (head and login nodes)",
    "sync_stall": "GPUs waiting on gradient sync and slow GPUs",
    "evaluation": "evaluation passes",
    "checkpoint": "training paused to write checkpoints",
    "storage": "storage (disks, file systems, buckets)",
    "data_transfer": "data transfer",
    "networking": "networking (NAT gateways, public IPs)",
    "monitoring": "monitoring and logs",
    "spot_reclaim": "work redone after spot reclaims",
    "failures": "work redone after hardware failures",
    "orchestration": "orchestrator fees",
    "discount": "commitment outside the training hours (overhead hours covered, unused term)",
}
assert set(HIDDEN_LABELS) == set(CATEGORIES)


@record
class Step:
    """One bar of the quote-to-budget waterfall: a total (from zero) or a change
    (``start``→``end``)."""

    label: str
    start: float
    end: float
    total: bool = False

    @property
    def delta(self) -> float:
        """Signed change this bar contributes."""
        return self.end - self.start

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "label": self.label,
            "start": self.start,
            "end": self.end,
            "total": self.total,
            "delta": self.delta,
        }


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


def _signed_usd(x: float) -> str:
    """``+$20,873`` / ``-$62,831`` (whole dollars; a change under a dollar reads ``<$1``)."""
    sign = "-" if x < 0 else "+"
    whole = round(abs(x))
    return f"{sign}${whole:,}" if whole or x == 0 else f"{sign}<$1"


def versus_planned(fc: Forecast) -> str:
    """The real bill against the planned bill, naming both sides: "+$20,873 over planned"."""
    d = fc.total_usd - fc.planned_usd
    return f"{_signed_usd(d)} {'under' if d < 0 else 'over'} planned"


def _mix_words(fc: Forecast) -> str:
    """Why the planned bill is below the quote: the share on spot and the Savings Plan."""
    p = fc.usage.purchase
    why = []
    if p.spot_fraction > 0:
        share = {0.5: "half the", 1.0: "all the"}.get(
            round(p.spot_fraction, 6), f"{p.spot_fraction:.0%} of the"
        )
        why.append(f"{share} nodes are spot")
    if p.savings_plan != "none":
        why.append(
            f"a {p.savings_plan} Savings Plan covers {p.savings_plan_coverage:.0%} of the rest"
        )
    return " and ".join(why)


def versus_quote(fc: Forecast) -> str:
    """The real bill against the quote, naming both sides and, below it, why:
    "-$62,831 under the quote, because half the nodes are spot"."""
    d = fc.total_usd - fc.quote_usd
    if d >= 0:
        return f"{_signed_usd(d)} over the quote"
    why = _mix_words(fc)
    return f"{_signed_usd(d)} under the quote" + (f", because {why}" if why else "")


@record
class ErrorBand:
    """How wrong the time model may be: the plan re-run at the P10 and P90 multipliers of
    actual / forecast GPU-hours, read from leave-one-source-out predictions of published whole
    runs (``time.error_band``, written by ``tools/fit_time_model.py``)."""

    gpu_hours_p10: float
    gpu_hours_p90: float
    total_usd_p10: float
    total_usd_p90: float
    basis: str

    @property
    def has_range(self) -> bool:
        """False where the plan states its hours: low and high are then the point forecast,
        which no output shows as a range."""
        return self.gpu_hours_p90 > self.gpu_hours_p10


@record
class Forecast:
    """A priced plan: usage, ledger, quote and the warnings a reader must see."""

    usage: Usage
    ledger: Ledger
    quote_usd: float
    quote_basis: str
    catalog_version: str
    #: What a reader must know about this bill, each with its kind (``warnings``: the texts).
    cautions: tuple[Caution, ...]
    #: None when priced from an already worked-out usage (simulate, optimize); ``forecast`` sets it.
    band: ErrorBand | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """The cautions' texts, as every output prints them."""
        return tuple(c.text for c in self.cautions)

    def cautions_of(self, kind: CautionKind) -> tuple[Caution, ...]:
        """The cautions of one kind."""
        return tuple(c for c in self.cautions if c.kind is kind)

    @property
    def total_usd(self) -> float:
        """The real bill: every ledger line."""
        return self.ledger.total_usd

    @property
    def multiplier(self) -> float:
        """Real bill / quote."""
        return self.total_usd / self.quote_usd if self.quote_usd else float("nan")

    def _planned_lines(self) -> tuple[float, float, str]:
        """(planned compute, planned commitment saving, basis) read off the ledger's own lines.

        Planned compute is the compute driver's lines: the quote's node-hours (nodes × pure
        training hours) split by the plan's spot share, each at its rate. A Savings Plan's
        discount line covers the whole wall-clock; the planned part is the same line over the
        pure training hours only (covered nodes × training hours × its per-hour saving). Extra
        instance groups, the rest of the discount line and the unused term of a commitment
        bought for the run are not in the quote's node-hours, so they are hidden costs.
        """
        u = self.usage
        compute = [ln for ln in self.ledger.lines if ln.driver == compute_driver.__name__]
        parts = [
            f"{ln.quantity:,.2f} {ln.unit}s × ${ln.unit_price_usd:,.2f} ({ln.item})"
            for ln in compute
        ]
        saving = 0.0
        covered = (
            [
                ln
                for ln in self.ledger.lines
                if ln.driver == discount_driver.__name__ and not ln.after_run
            ]
            if compute
            else []
        )
        if covered and u.wall_hours > 0:
            ln = covered[0]
            nodes = ln.quantity / u.wall_hours  # the line's quantity is covered nodes × wall hours
            saving = ln.unit_price_usd * nodes * u.compute.hours
            parts.append(
                f"{nodes:,.4g} covered nodes × {u.compute.hours:,.2f} h × "
                f"-${-ln.unit_price_usd:,.2f} ({ln.item})"
            )
        planned_compute = float(sum(ln.cost_usd for ln in compute))
        basis = f"{' + '.join(parts) or 'no compute lines'} = ${planned_compute + saving:,.2f}"
        return planned_compute, saving, basis

    @property
    def planned_usd(self) -> float:
        """The quote's node-hours at the plan's own purchase mix (spot share, commitment)."""
        compute, saving, _ = self._planned_lines()
        return compute + saving

    @property
    def planned_basis(self) -> str:
        """The planned bill's arithmetic, line by line."""
        return self._planned_lines()[2]

    @property
    def hidden_usd(self) -> float:
        """What the quote hides: real bill − planned bill."""
        return self.total_usd - self.planned_usd

    @property
    def hidden_multiplier(self) -> float:
        """Real bill / planned bill: the multiplier with spot and commitment savings taken out."""
        planned = self.planned_usd
        return self.total_usd / planned if planned else float("nan")

    def hidden_by_category(self) -> dict[str, float]:
        """Each category's share of ``hidden_usd`` (sums to it): every category's total, less
        the planned part of compute (the main cluster's training hours) and of discount."""
        compute, saving, _ = self._planned_lines()
        out = dict(self.ledger.by_category())
        out["compute"] -= compute
        out["discount"] -= saving
        return out

    def waterfall(self) -> tuple[Step, ...]:
        """Quote → purchase-mix savings → planned → each hidden cost (largest first) → real bill.

        Each total bar equals the sum of the bars before it, so the chart and the text add up;
        the P90 margin and the budget follow from the outlook (``headline.waterfall``).
        """
        steps = [Step(label="quote (on-demand list)", start=0.0, end=self.quote_usd, total=True)]
        level = self.quote_usd
        mix = self.planned_usd - self.quote_usd
        if mix != 0:
            steps.append(Step(label="spot and commitment savings", start=level, end=level + mix))
            level += mix
        steps.append(
            Step(label="planned (at the plan's purchase mix)", start=0.0, end=level, total=True)
        )
        hidden = self.hidden_by_category()
        for cat in sorted((c for c in CATEGORIES if hidden[c] != 0), key=lambda c: -abs(hidden[c])):
            steps.append(Step(label=HIDDEN_LABELS[cat], start=level, end=level + hidden[cat]))
            level += hidden[cat]
        # "forecast", not "expected": the hours are the time model's median-unbiased estimate
        # and the simulated mean of a modelled run is higher (its error is skewed; ``simulate``).
        steps.append(Step(label="real bill (forecast)", start=0.0, end=level, total=True))
        return tuple(steps)

    def percentages(self) -> dict[str, float]:
        """Share of the total per category (sums to 100 when the total is non-zero)."""
        total = self.total_usd
        return {
            k: (100.0 * v / total if total else 0.0) for k, v in self.ledger.by_category().items()
        }

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the contract keys (quote_usd, total_usd, multiplier, time, …)."""
        u = self.usage
        band = self.band if self.band is not None and self.band.has_range else None
        return {
            "name": u.name,
            "quote_usd": self.quote_usd,
            "quote_basis": self.quote_basis,
            "total_usd": self.total_usd,
            # The time model's range (80 % of similar runs), null where the plan states its
            # hours: never a "P10" equal to its "P90", and never a second thing called P90
            # (the only P90 is the budget's, of simulated runs).
            "total_usd_range_low": band.total_usd_p10 if band else None,
            "total_usd_range_high": band.total_usd_p90 if band else None,
            "multiplier": self.multiplier,
            "planned_usd": self.planned_usd,
            "planned_basis": self.planned_basis,
            "purchase_mix_usd": self.planned_usd - self.quote_usd,
            "hidden_usd": self.hidden_usd,
            "hidden_multiplier": self.hidden_multiplier,
            "versus": {"planned": versus_planned(self), "quote": versus_quote(self)},
            "hidden_by_category": self.hidden_by_category(),
            "waterfall": [s.as_dict() for s in self.waterfall()],
            # The outlook's keys, null here; ``headline.Advised.as_dict`` fills them in place.
            "budget_usd": None,
            "budget": None,
            "actions": None,
            "action_notes": None,
            "time": {
                "wall_hours": u.wall_hours,
                "gpu_hours": u.gpu_hours,
                "gpu_hours_range_low": band.gpu_hours_p10 if band else None,
                "gpu_hours_range_high": band.gpu_hours_p90 if band else None,
                "gpu_hours_range_basis": self.band.basis if self.band else None,
                "compute_hours": u.compute.hours,
                "compute_gpu_hours": u.compute.hours * u.gpus,
                "sync_stall_hours": u.compute.sync_stall_hours,
                "eval_hours": u.evaluation.hours,
                "checkpoint_stall_hours": u.checkpoint.stall_hours,
                "checkpoint_interval_hours": u.checkpoint.interval_hours,
                "checkpoint_interval_optimum_hours": u.checkpoint.interval_optimum_hours,
                "failure_lost_hours": u.reliability.failure_lost_hours,
                "reclaim_lost_hours": u.reliability.reclaim_lost_hours,
                "expected_failures": u.reliability.failure_events,
                "expected_reclaims": u.reliability.reclaim_events,
                "mfu": u.mfu,
                "layout": (
                    {
                        "tp": u.time.layout.tp,
                        "pp": u.time.layout.pp,
                        "dp": u.time.layout.dp,
                        "ep": u.time.layout.ep,
                        "recompute": u.time.layout.memory.recompute,
                        "offload": u.time.layout.memory.offload,
                        "memory_gb_per_gpu": u.time.layout.memory.total_gb,
                    }
                    if u.time.layout is not None
                    else None
                ),
                "flops": u.compute.flops,
                "factors": [{"factor": k, "explanation": v} for k, v in u.time.factors],
            },
            "cluster": {
                "provider": u.provider,
                "region": u.region,
                "instance": u.instance.instance,
                "accelerator": u.accelerator.id,
                "nodes": u.nodes,
                "gpus": u.gpus,
                "orchestrator": u.orchestrator,
                "spot_fraction": u.purchase.spot_fraction,
                "savings_plan": u.purchase.savings_plan,
                "savings_plan_coverage": u.purchase.savings_plan_coverage,
            },
            "lines": [line.as_dict() for line in self.ledger.lines],
            "by_category": dict(self.ledger.by_category()),
            "percent_by_category": self.percentages(),
            "catalog": {"as_of": u.as_of.isoformat(), "version": self.catalog_version},
            "run_date": u.run_date.isoformat(),
            "assumed": list(u.assumed),
            "warnings": list(self.warnings),
            "cautions": [c.as_dict() for c in self.cautions],
        }


@record
class Quote:
    """What a planning meeting multiplies: instances × on-demand list price × planned hours."""

    usd: float
    #: The on-demand rate of one instance ($/h) the quote multiplies.
    rate_usd: float
    basis: str


def quote_of(usage: Usage, catalog: Catalog) -> Quote:
    """The quote of a worked-out usage: the one rule (the forecast's headline and the rule of
    thumb's base both read it)."""
    od = instance_rate(catalog, usage, "on_demand")
    usd = usage.nodes * od.usd * usage.compute.hours
    basis = (
        f"{usage.nodes} × {usage.instance.instance} × ${od.usd:,.2f}/h {od.words} × "
        f"{usage.compute.hours:,.2f} h = ${usd:,.2f}"
    )
    return Quote(usd=usd, rate_usd=od.usd, basis=basis)


def forecast_usage(usage: Usage, catalog: Catalog, *, today: date | None = None) -> Forecast:
    """Price an already-worked-out usage (the simulation and optimizer enter here)."""
    quote = quote_of(usage, catalog)
    ledger = estimate(usage, catalog)
    _check_finite(usage, ledger, quote.usd)
    return Forecast(
        usage=usage,
        ledger=ledger,
        quote_usd=quote.usd,
        quote_basis=quote.basis,
        catalog_version=catalog.version,
        cautions=_cautions(usage, ledger, catalog, today),
    )


def forecast(plan: Plan, catalog: Catalog, *, today: date | None = None) -> Forecast:
    """Work out the plan's usage and price it, with the time model's error band."""
    fc = forecast_usage(usage_for(plan, catalog, today=today), catalog, today=today)
    return replace(fc, band=error_band(plan, catalog, fc, today))


def error_band(
    plan: Plan,
    catalog: Catalog,
    fc: Forecast,
    today: date | None,
    *,
    measured_mfu: float | None = None,
) -> ErrorBand:
    """The P10/P90 GPU-hours and bill: the plan re-run with its training hours scaled.

    Hours the plan states (``run.hours``) are the user's, not the model's: their band is the
    point itself, and the basis says so. A measured MFU (a profile calibration) keeps the
    whole-run band: the cross-validated residuals are of whole runs, whose restarts, stalls
    and slow nodes no one-step profile measures.
    """
    u = fc.usage
    gpu_hours = u.gpu_hours
    if u.time.hours_given:
        return ErrorBand(
            gpu_hours_p10=gpu_hours,
            gpu_hours_p90=gpu_hours,
            total_usd_p10=fc.total_usd,
            total_usd_p90=fc.total_usd,
            basis="training hours stated in the plan (run.hours): no time-model range",
        )
    q = error_band_quantiles(catalog, u.gpus)
    ends = []
    for scale in (q.p10, q.p90):
        v = usage_for(plan, catalog, today=today, time_scale=scale, measured_mfu=measured_mfu)
        ends.append((v.gpu_hours, estimate(v, catalog).total_usd))
    (gh_lo, usd_lo), (gh_hi, usd_hi) = ends
    # Named as a range, not as percentiles: the only P90 shown is the budget's (issue #42).
    basis = (f"{RANGE_LABEL}: training hours × {q.p10:.2f} to × {q.p90:.2f}, the band of "
             f"{q.bucket}: {q.source}")  # fmt: skip
    return ErrorBand(
        gpu_hours_p10=gh_lo,
        gpu_hours_p90=gh_hi,
        total_usd_p10=usd_lo,
        total_usd_p90=usd_hi,
        basis=basis,
    )


#: Share of the time spent recovering from failures/reclaims past which a warning says the
#: expected-value model is no longer a good description of the run.
OVERLOADED_RECOVERY = 0.5
#: Longest whole-run wall-clock answered: about 114 years, the same bound as ``run.hours``.
MAX_WALL_HOURS = 1e6


def _check_finite(usage: Usage, ledger: Ledger, quote: float) -> None:
    """Refuse a forecast no one could act on rather than print "$inf" or a 300-digit bill.

    The plan schema caps every numeric field (``spec.PLAN_CAPS``); what it cannot bound is a
    product of several values each within its cap (year-long restarts after hourly failures),
    overheads that grow a short run past a century, or a ``Plan`` built in code, unvalidated.
    """
    if not math.isfinite(usage.wall_hours) or usage.wall_hours > MAX_WALL_HOURS:
        parts = {
            "training": usage.compute.hours,
            "synchronization": usage.compute.sync_stall_hours,
            "evaluation": usage.evaluation.hours,
            "checkpoint stalls": usage.checkpoint.stall_hours,
            "failures (reliability.*, checkpoint.interval_hours)": (
                usage.reliability.failure_lost_hours
            ),
            "spot reclaims (reliability.*, purchase.spot_fraction)": (
                usage.reliability.reclaim_lost_hours
            ),
        }
        worst = max(parts, key=lambda k: parts[k] if math.isfinite(parts[k]) else math.inf)
        msg = (
            f"the run's wall-clock ({usage.wall_hours:.3g} h) is over {MAX_WALL_HOURS:.0e} h "
            f"(about 114 years); most of it is {worst}: a value in the plan is far too large"
        )
        # Training itself too long: the tokens (hours derived from the model) are what to change.
        field = (
            "model.tokens" if worst == "training" and usage.compute.flops is not None else "plan"
        )
        raise SpecError(msg, field=field)
    bad = [
        ln for ln in ledger.lines if not (math.isfinite(ln.quantity) and math.isfinite(ln.cost_usd))
    ]
    if bad or not math.isfinite(quote):
        what = f"line '{bad[0].item}' ({bad[0].category})" if bad else "the quote"
        msg = (
            f"the bill is not a finite number: {what} overflows; a value in the plan is far too "
            "large"
        )
        raise SpecError(msg, field="plan")


def _cautions(
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
