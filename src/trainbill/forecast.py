"""Forecast: the plan's itemized real bill next to the naive quote.

The quote is what a planning meeting multiplies: instances × on-demand list price × planned
hours. The real bill is every driver's lines. Their ratio is the multiplier the seed article
is about; ``Forecast.as_dict`` is the JSON contract of ``trainbill forecast --json``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from trainbill.catalog import Catalog
from trainbill.costs import estimate
from trainbill.costs._pricing import UNPRICED, instance_rate
from trainbill.errors import SpecError
from trainbill.ledger import CATEGORIES, Ledger
from trainbill.spec import Plan
from trainbill.usage import Usage, usage_for

__all__ = ["STALE_PRICE_DAYS", "ErrorBand", "Forecast", "forecast", "forecast_usage"]

#: Prices older than this are flagged in the output (issue #7: warn after 90 days).
STALE_PRICE_DAYS = 90


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorBand:
    """How wrong the time model may be: the plan re-run at the P10 and P90 multipliers of
    actual / forecast GPU-hours, read from leave-one-source-out predictions of published whole
    runs (``time.error_band``, written by ``tools/fit_time_model.py``)."""

    gpu_hours_p10: float
    gpu_hours_p90: float
    total_usd_p10: float
    total_usd_p90: float
    basis: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Forecast:
    """A priced plan: usage, ledger, quote and the warnings a reader must see."""

    usage: Usage
    ledger: Ledger
    quote_usd: float
    quote_basis: str
    catalog_version: str
    warnings: tuple[str, ...]
    #: None when priced from an already worked-out usage (simulate, optimize); ``forecast`` sets it.
    band: ErrorBand | None = None

    @property
    def total_usd(self) -> float:
        """The real bill: every ledger line."""
        return self.ledger.total_usd

    @property
    def multiplier(self) -> float:
        """Real bill / quote."""
        return self.total_usd / self.quote_usd if self.quote_usd else float("nan")

    def percentages(self) -> dict[str, float]:
        """Share of the total per category (sums to 100 when the total is non-zero)."""
        total = self.total_usd
        return {
            k: (100.0 * v / total if total else 0.0) for k, v in self.ledger.by_category().items()
        }

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the contract keys (quote_usd, total_usd, multiplier, time, …)."""
        u = self.usage
        return {
            "name": u.name,
            "quote_usd": self.quote_usd,
            "quote_basis": self.quote_basis,
            "total_usd": self.total_usd,
            "total_usd_p10": self.band.total_usd_p10 if self.band else None,
            "total_usd_p90": self.band.total_usd_p90 if self.band else None,
            "multiplier": self.multiplier,
            "time": {
                "wall_hours": u.wall_hours,
                "gpu_hours": u.wall_hours * u.gpus,
                "gpu_hours_p10": self.band.gpu_hours_p10 if self.band else None,
                "gpu_hours_p90": self.band.gpu_hours_p90 if self.band else None,
                "error_band_basis": self.band.basis if self.band else None,
                "compute_hours": u.compute_hours,
                "compute_gpu_hours": u.compute_hours * u.gpus,
                "sync_stall_hours": u.sync_stall_hours,
                "eval_hours": u.eval_hours,
                "checkpoint_stall_hours": u.checkpoint_stall_hours,
                "checkpoint_interval_hours": u.checkpoint_interval_hours,
                "checkpoint_interval_optimum_hours": u.checkpoint_interval_optimum_hours,
                "failure_lost_hours": u.failure_lost_hours,
                "reclaim_lost_hours": u.reclaim_lost_hours,
                "expected_failures": u.failure_events,
                "expected_reclaims": u.reclaim_events,
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
                "flops": u.flops,
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
                "spot_fraction": u.spot_fraction,
                "savings_plan": u.savings_plan,
                "savings_plan_coverage": u.savings_plan_coverage,
            },
            "lines": [line.as_dict() for line in self.ledger.lines],
            "by_category": dict(self.ledger.by_category()),
            "percent_by_category": self.percentages(),
            "catalog": {"as_of": u.as_of.isoformat(), "version": self.catalog_version},
            "run_date": u.run_date.isoformat(),
            "assumed": list(u.assumed),
            "warnings": list(self.warnings),
        }


def forecast_usage(usage: Usage, catalog: Catalog, *, today: date | None = None) -> Forecast:
    """Price an already-worked-out usage (the simulation and optimizer enter here)."""
    od = instance_rate(catalog, usage, "on_demand")
    quote = usage.nodes * od.usd * usage.compute_hours
    quote_basis = (
        f"{usage.nodes} × {usage.instance.instance} × ${od.usd:,.2f}/h {od.words} × "
        f"{usage.compute_hours:,.2f} h = ${quote:,.2f}"
    )
    ledger = estimate(usage, catalog)
    _check_finite(usage, ledger, quote)
    return Forecast(
        usage=usage,
        ledger=ledger,
        quote_usd=quote,
        quote_basis=quote_basis,
        catalog_version=catalog.version,
        warnings=tuple(_warnings(usage, ledger, catalog, today)),
    )


def forecast(plan: Plan, catalog: Catalog, *, today: date | None = None) -> Forecast:
    """Work out the plan's usage and price it, with the time model's error band."""
    fc = forecast_usage(usage_for(plan, catalog, today=today), catalog, today=today)
    return replace(fc, band=_error_band(plan, catalog, fc, today))


def _error_band(plan: Plan, catalog: Catalog, fc: Forecast, today: date | None) -> ErrorBand:
    """The P10/P90 GPU-hours and bill: the plan re-run with its training hours scaled.

    Hours the plan states (``run.hours``) are the user's, not the model's: their band is the
    point itself, and the basis says so.
    """
    u = fc.usage
    gpu_hours = u.wall_hours * u.gpus
    if plan.run.hours is not None or u.flops is None:
        return ErrorBand(gpu_hours_p10=gpu_hours, gpu_hours_p90=gpu_hours, total_usd_p10=fc.total_usd,
                         total_usd_p90=fc.total_usd,
                         basis="training hours stated in the plan (run.hours): no time-model error band")  # fmt: skip
    lo_a = catalog.assumption("time.error_band.whole_run_p10")
    hi_a = catalog.assumption("time.error_band.whole_run_p90")
    ends = []
    for a in (lo_a, hi_a):
        v = usage_for(plan, catalog, today=today, time_scale=float(a.value))
        ends.append((v.wall_hours * v.gpus, estimate(v, catalog).total_usd))
    (gh_lo, usd_lo), (gh_hi, usd_hi) = ends
    basis = (f"training hours × {float(lo_a.value):.2f} (P10) and × {float(hi_a.value):.2f} (P90): "
             f"{lo_a.source}")  # fmt: skip
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
            "training": usage.compute_hours, "synchronization": usage.sync_stall_hours,
            "evaluation": usage.eval_hours, "checkpoint stalls": usage.checkpoint_stall_hours,
            "failures (reliability.*, checkpoint.interval_hours)": usage.failure_lost_hours,
            "spot reclaims (reliability.*, purchase.spot_fraction)": usage.reclaim_lost_hours,
        }  # fmt: skip
        worst = max(parts, key=lambda k: parts[k] if math.isfinite(parts[k]) else math.inf)
        msg = (f"the run's wall-clock ({usage.wall_hours:.3g} h) is over {MAX_WALL_HOURS:.0e} h (about 114 years); "
               f"most of it is {worst}: a value in the plan is far too large")  # fmt: skip
        # Training itself too long: the tokens (hours derived from the model) are what to change.
        field = "model.tokens" if worst == "training" and usage.flops is not None else "plan"
        raise SpecError(msg, field=field)
    bad = [
        ln for ln in ledger.lines if not (math.isfinite(ln.quantity) and math.isfinite(ln.cost_usd))
    ]
    if bad or not math.isfinite(quote):
        what = f"line '{bad[0].item}' ({bad[0].category})" if bad else "the quote"
        msg = f"the bill is not a finite number: {what} overflows; a value in the plan is far too large"
        raise SpecError(msg, field="plan")


def _warnings(usage: Usage, ledger: Ledger, catalog: Catalog, today: date | None) -> list[str]:
    out: list[str] = []
    ref_day = today or date.today()  # noqa: DTZ011 - a calendar date
    newest_compute = max(
        (
            p.effective_from
            for p in catalog.prices
            if p.item == usage.instance.instance and p.effective_from <= usage.as_of
        ),
        default=None,
    )
    if newest_compute is not None and usage.as_of >= ref_day:
        age = (ref_day - newest_compute).days
        if age > STALE_PRICE_DAYS:
            out.append(
                f"the newest {usage.instance.instance} price point is from {newest_compute} "
                f"({age} days old); run 'trainbill prices update {usage.provider}' for current prices"
            )
    unpriced = [line.item for line in ledger.lines if line.source.startswith(UNPRICED)]
    if unpriced:
        out.append(
            f"{len(unpriced)} line(s) are NOT PRICED ($0): the catalog has no price of the charging "
            f"provider for {', '.join(unpriced)} (each line's source names it); add your rates "
            "with --catalog DIR"
        )
    if any("price used: no" in line.source for line in ledger.lines):
        out.append(f"some prices come from the provider's reference region, not {usage.region}")
    out.extend(usage.warnings)  # how the plan was read (GPUs rounded up to whole nodes)
    out.extend(usage.time.warnings)  # memory: fits only with recompute/offload (trainbill.memory)
    # Failures and reclaims are priced at their expected count, each losing half an interval
    # plus a restart. That is sound while events are rare; when one arrives every few restarts
    # the run spends its time recovering (and at one per recovery it never progresses), so the
    # expected-value bill understates: say so.
    exposed = usage.exposed_hours
    per_hour = (usage.failure_events + usage.reclaim_events) / exposed if exposed > 0 else 0.0
    busy = per_hour * (usage.checkpoint_interval_hours / 2.0 + usage.restart_hours)
    if busy >= OVERLOADED_RECOVERY:
        out.append(
            f"failures and spot reclaims arrive every {60.0 / per_hour:,.0f} min and each costs "
            f"{usage.checkpoint_interval_hours / 2.0 + usage.restart_hours:.2g} h of lost work and restart "
            f"({busy:.0%} of the time): the expected-value estimate understates this run; use fewer "
            "GPUs, faster restarts (reliability.restart_hours, orchestrator) or shorter checkpoint intervals"
        )
    assert set(ledger.by_category()) == set(CATEGORIES)
    return out
