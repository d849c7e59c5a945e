"""The first screen: quote, planned bill, real bill and P90 budget kept apart, and what to do.

A finance approver reads four numbers: the **quote** (on-demand list × planned node-hours), the
**planned** bill (those node-hours at the plan's own purchase mix), the **real** bill (every
ledger line) and the **budget** (the P90 of simulated runs). Mixing spot savings and hidden
costs into one multiplier hid the costs: the seed plan runs half on spot, so its real bill sits
below its quote although the quote leaves out a sixth of it. ``Forecast`` keeps quote, planned
and real apart; this module adds what needs the simulation and the planner (which import
``trainbill.forecasting``, hence a module of its own): the budget and the ranked actions.

Budget. ``simulate`` samples failures, spot reclaims and restarts, checkpoint stall spread,
GPU throttling (stragglers) and the spot price within its observed range, ``BUDGET_TRIALS``
runs from seed ``BUDGET_SEED`` (about 0.05 s; the same plan always gives the same budget). The
budget is that P90, never below the expected bill: where an event is rare (0.05 failures
expected) nine runs in ten have none and the P90 run costs less than the expected bill, and a
budget below the forecast would be a trap. Where the time model predicts the hours, the
simulation also samples the model's own error (``simulate.SimulationParams.time_error_*``,
the lognormal behind ``Forecast.band``), independently of the run-to-run chance: the issue's
budget is "what to approve", and an approver must cover "the model may be off" too. Hours a
plan states carry no model error.

Actions. Each is a change the user can buy or set, priced by the same forecast as the plan
(``usage_for`` and the cost drivers) against the plan as written: the checkpoint interval's
Young/Daly optimum (``usage``), spot or not (deadline odds from ``simulate``), the node count
(``optimize`` over node counts with the plan's mix held fixed), a Savings Plan bought for the
run (only where the catalog has a published rate, its unused term charged), and the cheapest
region or zone for the same instance in the catalog. Savings are against the plan, one change
at a time: they do not add up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.actions import (
    MIN_SAVING_USD,
    Action,
    ActionKind,
    checkpoint_action,
    rank_actions,
    region_action,
    right_size_action,
    s3_endpoint_action,
    savings_plan_action,
    sized_action,
    spot_action,
    zone_action,
)
from trainbill.calibration import measured_mfu_of
from trainbill.catalog import Catalog
from trainbill.errors import TrainbillError
from trainbill.forecasting import (
    BUDGET_LABEL,
    HIDDEN_LABELS,
    RANGE_LABEL,
    Forecast,
    Step,
    forecast_usage,
)
from trainbill.simulate import Simulation, simulate
from trainbill.spec import Plan
from trainbill.usage import usage_for

__all__ = [
    "BUDGET_SEED",
    "BUDGET_TRIALS",
    "HIDDEN_LABELS",
    "MIN_SAVING_USD",
    "Action",
    "ActionKind",
    "Advised",
    "Budget",
    "Outlook",
    "Step",
    "advise",
    "budget",
    "outlook_of",
    "rank_actions",
    "waterfall",
]

#: Simulated runs behind the budget: the P90's standard error is then about 1 % of the spread
#: between P10 and P90, far below what the inputs are known to.
BUDGET_TRIALS = 2000
#: Fixed seed: the same plan gives the same budget on every machine and every run.
BUDGET_SEED = 0


@record
class Budget:
    """What to budget: the simulated P90, and the run it describes."""

    usd: float
    p50_usd: float
    p90_usd: float
    trials: int
    seed: int
    deadline_hours: float | None
    deadline_miss_probability: float | None
    basis: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "usd": self.usd,
            "p50_usd": self.p50_usd,
            "p90_usd": self.p90_usd,
            "trials": self.trials,
            "seed": self.seed,
            "deadline_hours": self.deadline_hours,
            "deadline_miss_probability": self.deadline_miss_probability,
            "basis": self.basis,
        }


@record
class Outlook:
    """The budget and the ranked actions of a forecast (``advise``; kept beside it in
    ``Advised``)."""

    #: None when the plan cannot be simulated (``notes`` says why).
    budget: Budget | None
    #: Best saving first; empty when nothing that can be bought saves money.
    actions: tuple[Action, ...]
    #: Why an action was not considered (no published Savings Plan rate, no other region …).
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The forecast JSON's budget and action keys."""
        return {
            "budget_usd": self.budget.usd if self.budget is not None else None,
            "budget": self.budget.as_dict() if self.budget is not None else None,
            "actions": [a.as_dict() for a in self.actions],
            "action_notes": list(self.notes),
        }


# --- waterfall -------------------------------------------------------------------------------


def waterfall(fc: Forecast | Advised, outlook: Outlook | None = None) -> tuple[Step, ...]:
    """The forecast's quote-to-bill steps (``Forecast.waterfall``), then, with a budget (the
    ``outlook``, or an ``Advised``'s own), the P90 margin and the budget (each total bar still
    the sum of the bars before it)."""
    if isinstance(fc, Advised):
        outlook = outlook if outlook is not None else fc.outlook
        fc = fc.forecast
    steps = fc.waterfall()
    if outlook is None or outlook.budget is None:
        return steps
    level, b = steps[-1].end, outlook.budget.usd
    # Most of a modelled run's margin is the time model's own error: the label says so.
    why = (
        "failures, reclaims, stragglers"
        if fc.usage.time.hours_given
        else "time-model error, failures, reclaims, stragglers"
    )
    return (
        *steps,
        Step(label=f"P90 margin ({why})", start=level, end=b),
        Step(label=BUDGET_LABEL, start=0.0, end=b, total=True),
    )


@record
class Advised:
    """A forecast and, beside it, its outlook (None where it was not asked for: ``--csv``).

    The outlook prices the plan many times over (simulation, planner), so it is not part of
    ``Forecast``; ``as_dict`` is the one JSON document of ``trainbill forecast --json`` and
    ``POST /v1/forecast``: the forecast's keys, the outlook's filled in at their places.
    """

    forecast: Forecast
    outlook: Outlook | None = None

    def waterfall(self) -> tuple[Step, ...]:
        """Quote to budget (``waterfall``)."""
        return waterfall(self.forecast, self.outlook)

    def as_dict(self) -> dict[str, Any]:
        """The forecast's JSON with the budget, actions and the budget's waterfall steps."""
        doc = self.forecast.as_dict()
        if self.outlook is not None:
            doc.update(self.outlook.as_dict())  # the keys exist: their order is kept
            doc["waterfall"] = [s.as_dict() for s in self.waterfall()]
        return doc


# --- budget ----------------------------------------------------------------------------------


def budget(
    fc: Forecast,
    catalog: Catalog,
    *,
    deadline_hours: float | None = None,
    trials: int = BUDGET_TRIALS,
    seed: int = BUDGET_SEED,
) -> tuple[Budget, Simulation]:
    """The P90 of ``trials`` simulated runs of the forecast's usage, and the simulation.

    The simulation prices its trials with the cost drivers; where the forecast's lines differ
    from theirs (a bill calibration replaced some), the simulated spread is laid on top of the
    forecast's own bill: budget = real + (P90 − the drivers' bill of the same usage).
    """
    sim = simulate(fc.usage, catalog, trials=trials, rng=seed, deadline_hours=deadline_hours)
    shift = fc.total_usd - sim.deterministic_total_usd
    p90 = sim.cost_usd.p90 + shift
    usd = max(p90, fc.total_usd)
    floor = (
        ""
        if p90 >= fc.total_usd
        else (
            f"; the P90 run (${p90:,.0f}) costs less than the expected bill because the rare "
            "events priced at their expected count do not happen in 9 runs of 10, so the budget "
            "is the expected bill"
        )
    )
    band = fc.band
    band_words = ""
    if band is not None and band.has_range:
        band_words = (
            " Included: the time model's own error, sampled independently (its "
            f"{RANGE_LABEL} alone moves the bill ${band.total_usd_p10:,.0f}-"
            f"${band.total_usd_p90:,.0f}, from published runs it was not fitted to)."
        )
    # Words a finance reader reads: the seed and the sampling law are in the JSON (``seed``)
    # and the docs, not in the sentence (issue #42).
    basis = (
        f"P90 of {trials:,} simulated runs: hardware failures and spot reclaims, the work lost "
        "and restart after each, checkpoint stall spread, GPU throttling episodes (stragglers) "
        f"and the spot price within its observed range; 9 runs in 10 cost less{floor}."
        f"{band_words}"
    )
    return (
        Budget(
            usd=usd,
            p50_usd=sim.cost_usd.p50 + shift,
            p90_usd=p90,
            trials=trials,
            seed=seed,
            deadline_hours=sim.deadline_hours,
            deadline_miss_probability=sim.deadline_miss_probability,
            basis=basis,
        ),
        sim,
    )


def advise(
    plan: Plan,
    fc: Forecast,
    catalog: Catalog,
    *,
    today: date | None = None,
    calibrations: Sequence[Any] = (),
    trials: int = BUDGET_TRIALS,
    seed: int = BUDGET_SEED,
) -> Advised:
    """The forecast with its outlook beside it (``outlook_of``)."""
    return Advised(
        forecast=fc,
        outlook=outlook_of(
            plan, fc, catalog, today=today, calibrations=calibrations, trials=trials, seed=seed
        ),
    )


def outlook_of(
    plan: Plan,
    fc: Forecast,
    catalog: Catalog,
    *,
    today: date | None = None,
    calibrations: Sequence[Any] = (),
    trials: int = BUDGET_TRIALS,
    seed: int = BUDGET_SEED,
) -> Outlook:
    """The P90 budget and the ranked actions of a forecast.

    ``catalog`` is the one the forecast priced with (bill calibrations' rates on it), and
    ``calibrations`` the files behind it: each variant of the plan takes a profile's measured
    MFU by the rule the forecast took it (``calibration.measured_mfu_of``), so a saving is
    measured against the same kernel efficiency. The planner's node-count search has no
    measured MFU, so with one right-size takes the node-count sweep instead (``sized_action``).

    A plan the forecast can price but a variant or the simulation cannot (a run at the
    wall-clock cap, which any extra hour pushes over) loses only that part, and the notes say
    why: the forecast itself is never refused for its advice.
    """
    notes: list[str] = []
    b: Budget | None = None
    sim: Simulation | None = None
    try:
        b, sim = budget(
            fc, catalog, deadline_hours=plan.run.deadline_hours, trials=trials, seed=seed
        )
    except TrainbillError as exc:
        notes.append(f"budget: the plan cannot be simulated ({exc})")

    def price(variant: Plan) -> Forecast:
        mfu = measured_mfu_of(variant, catalog, calibrations)
        usage = usage_for(variant, catalog, today=today, measured_mfu=mfu)
        return forecast_usage(usage, catalog, today=today)

    def right_size() -> Action | None:
        if measured_mfu_of(plan, catalog, calibrations) is not None:
            return sized_action(plan, fc, catalog, price, today)
        return right_size_action(plan, fc, catalog, price, today, notes)

    steps: tuple[tuple[str, Callable[[], Action | None]], ...] = (
        ("checkpoint interval", lambda: checkpoint_action(plan, fc, price)),
        ("spot", lambda: spot_action(plan, fc, catalog, price, sim, notes)),
        ("right size", right_size),
        ("Savings Plan", lambda: savings_plan_action(plan, fc, catalog, price, notes)),
        ("region", lambda: region_action(plan, fc, catalog, price, notes)),
        ("zone", lambda: zone_action(plan, fc, catalog, price)),
        ("S3 gateway endpoint", lambda: s3_endpoint_action(plan, fc, price)),
    )
    found: list[Action | None] = []
    for name, step in steps:
        try:
            found.append(step())
        except TrainbillError as exc:
            notes.append(f"{name}: not priced ({exc})")
    return Outlook(budget=b, actions=rank_actions(found), notes=tuple(notes))
