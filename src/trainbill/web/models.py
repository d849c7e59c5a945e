"""Request bodies of the API: strict JSON (no booleans as numbers, no NaN), capped sizes.

A plan itself is a plain mapping here: it goes through ``trainbill.spec.plan_from_dict`` like a
TOML file, so the page, the CLI and a file share one schema and one set of error messages.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Body
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from trainbill.web.limits import LIMITS

__all__ = [
    "CalibratedForecastRequest",
    "OptimizeRequest",
    "OptimizeSpace",
    "PlanBody",
    "PlanTomlRequest",
    "PlanWithCalibrations",
    "SimulateRequest",
    "WaterfallRequest",
    "WaterfallStepBody",
]

_PLAN_EXAMPLE: dict[str, Any] = {
    "run": {"name": "seed-70b-finetune", "hours": 72},
    "model": {"params": 70e9},
    "cluster": {"provider": "aws", "region": "us-east-1", "instance": "p5.48xlarge", "nodes": 32},
    "purchase": {"spot_fraction": 0.5, "savings_plan": "none"},
    "prices": {"as_of": "2025-05-01"},
    "checkpoint": {"interval_hours": 2},
}

PlanBody = Annotated[
    dict[str, Any],
    Body(
        description=(
            "A plan: the same sections and keys as a plan TOML file (schema: GET /v1/schema/plan)."
        ),
        examples=[_PLAN_EXAMPLE],
    ),
]


def _no_boolean(value: Any) -> Any:
    """JSON ``true`` is not the number 1 (pydantic's lax mode reads it so)."""
    if isinstance(value, bool):
        msg = f"expected a number, not the boolean {str(value).lower()}"
        raise ValueError(msg)  # noqa: TRY004 - pydantic turns ValueError into a 422 for the field
    return value


#: A JSON integer (or its text); never a boolean.
_Int = Annotated[int, BeforeValidator(_no_boolean)]
#: A finite JSON number (or its text); never a boolean, NaN or ±Infinity.
_Float = Annotated[float, BeforeValidator(_no_boolean), Field(allow_inf_nan=False)]
#: A JSON boolean only: pydantic's lax mode reads "yes", "on", 1 as true, so a typo'd or
#: mistyped switch would silently turn on (``allow_stand_ins: "yes"`` searched stand-ins).
_Bool = Annotated[bool, Field(strict=True)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: Calibration documents: the TOML text of files written by ``trainbill profile -o`` (measured
#: MFU) or ``trainbill calibrate`` (overhead rates fitted to bills), as ``--calibration`` takes.
_Calibrations = list[str]


class CalibratedForecastRequest(_Request):
    """A plan and calibration documents (at least one)."""

    plan: dict[str, Any]
    calibrations: _Calibrations = Field(min_length=1, max_length=LIMITS.max_calibrations)


class PlanWithCalibrations(_Request):
    """A plan and optional calibrations: the wrapped body of ``/v1/report`` and the ledger
    downloads (they also take the bare plan)."""

    plan: dict[str, Any]
    calibrations: _Calibrations = Field(default_factory=list, max_length=LIMITS.max_calibrations)


class SimulateRequest(_Request):
    """A plan, how many Monte Carlo trials to run, and calibrations (``--calibration``)."""

    plan: dict[str, Any]
    trials: _Int = Field(default=2000, ge=1, le=LIMITS.max_trials)
    seed: _Int = Field(default=0, ge=0)
    calibrations: _Calibrations = Field(default_factory=list, max_length=LIMITS.max_calibrations)


_AXIS = LIMITS.max_axis_values


class OptimizeSpace(_Request):
    """The grid to search (``trainbill.optimize.SearchSpace``); omitted axes are derived from the
    plan."""

    instances: list[str] | None = Field(default=None, max_length=_AXIS)
    nodes: list[Annotated[_Int, Field(ge=1, le=LIMITS.max_nodes)]] | None = Field(
        default=None, max_length=_AXIS
    )
    spot_fractions: list[_Float] | None = Field(default=None, max_length=21)
    savings_plans: list[str] | None = Field(default=None, max_length=3)
    coverages: list[_Float] | None = Field(default=None, max_length=21)
    orchestrators: list[str] | None = Field(default=None, max_length=4)  # ec2, hyperpod, eks, vm
    checkpoint_intervals_hours: list[_Float] | None = Field(default=None, max_length=24)


class OptimizeRequest(_Request):
    """A plan (the template, always a candidate), the constraints and the search space.

    The same inputs as ``trainbill optimize``: ``deadline_hours`` defaults to the plan's
    ``run.deadline_hours``; ``objective`` "p90" is the CLI's ``--p90``.
    """

    plan: dict[str, Any]
    deadline_hours: _Float | None = None
    budget_usd: _Float | None = None
    objective: Literal["expected", "p90"] = "expected"
    clouds: list[str] | None = Field(default=None, max_length=8)
    space: OptimizeSpace | None = None
    #: The CLI's ``--allow-stand-ins``: also search catalog stand-ins.
    allow_stand_ins: _Bool = False
    #: Bill calibrations (``--calibration``); a profile is refused, as by the CLI: the grid's
    #: plans have no measured MFU.
    calibrations: _Calibrations = Field(default_factory=list, max_length=LIMITS.max_calibrations)


class PlanTomlRequest(_Request):
    """The text of a plan TOML file (the page's upload), read as ``trainbill forecast`` reads a
    file."""

    toml: str = Field(max_length=LIMITS.max_body_bytes)
    #: The uploaded file's name, only to name it in error messages.
    filename: str = Field(default="uploaded plan", min_length=1, max_length=200)


class WaterfallStepBody(_Request):
    """One step of a forecast response's ``waterfall`` (``Forecast.waterfall``)."""

    label: str = Field(min_length=1, max_length=200)
    start: _Float
    end: _Float
    total: _Bool = False
    delta: _Float | None = None


class WaterfallRequest(_Request):
    """What a waterfall needs, from a forecast response: its ``waterfall`` steps (the headline:
    quote → planned → hidden costs → real bill → budget), or the quote and ``by_category``
    (the ledger's categories against the quote)."""

    quote_usd: _Float | None = Field(default=None, ge=0)
    by_category: dict[str, _Float] | None = None
    steps: list[WaterfallStepBody] | None = Field(default=None, min_length=1, max_length=64)
    #: The report's phone layout of the headline waterfall (labels above the bars, drawn about
    #: 1:1 at 390 px), for the calculator's narrow screens (issue #42).
    narrow: _Bool = False
