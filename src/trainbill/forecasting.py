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
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.cautions import (
    STALE_PRICE_DAYS,
    Caution,
    CautionKind,
    gather_cautions,
    plain_words,
)
from trainbill.costs import compute as compute_driver
from trainbill.costs import discount as discount_driver
from trainbill.costs import estimate
from trainbill.costs._pricing import instance_rate
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
        cautions=gather_cautions(usage, ledger, catalog, today),
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


#: Longest whole-run wall-clock answered: about 114 years, the same bound as ``run.hours``.
MAX_WALL_HOURS = 1e6


def wall_clock_answered(usage: Usage) -> bool:
    """Whether the run's wall-clock is one a forecast answers: finite and at most
    ``MAX_WALL_HOURS``. The one home of that bound: ``_check_finite`` refuses past it, and the
    planner asks it before deciding whether the plan as written needs a full forecast."""
    return math.isfinite(usage.wall_hours) and usage.wall_hours <= MAX_WALL_HOURS


def _check_finite(usage: Usage, ledger: Ledger, quote: float) -> None:
    """Refuse a forecast no one could act on rather than print "$inf" or a 300-digit bill.

    The plan schema caps every numeric field (``spec.PLAN_CAPS``); what it cannot bound is a
    product of several values each within its cap (year-long restarts after hourly failures),
    overheads that grow a short run past a century, or a ``Plan`` built in code, unvalidated.
    """
    if not wall_clock_answered(usage):
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
