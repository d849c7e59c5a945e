"""From a request's plan mapping to a plan this server will price: the spec's validation, then
the server's own caps (``Limits``), then a forecast that must be finite and within them.

Every route that takes a plan goes through ``Pricing``, so a plan refused by one endpoint is
refused by all of them with the same message and field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from trainbill.catalog import Catalog
from trainbill.errors import SpecError, TrainbillError
from trainbill.spec import Plan, plan_from_dict
from trainbill.usecases.price import forecast_plan
from trainbill.web.limits import Limits

__all__ = ["Pricing", "check_forecast", "check_plan", "clean"]

_BODY = "request body"


def clean(x: Any) -> Any:
    """JSON as ``trainbill forecast --json`` writes it: NaN/inf become null, dates ISO strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [clean(v) for v in x]
    if isinstance(x, date):
        return x.isoformat()
    return x


def check_plan(plan: Plan, *, limits: Limits, prefix: str, source: str = _BODY) -> None:
    """This server's own caps on cluster size (``Limits``; the plan schema already refuses
    non-finite numbers and anything past its sanity caps, and a deployment may want less)."""
    c = plan.cluster
    caps = [("cluster.nodes", c.nodes, limits.max_nodes), ("cluster.gpus", c.gpus, limits.max_gpus)]
    caps += [
        (f"cluster.extra_groups.{i}.count", g.count, limits.max_nodes)
        for i, g in enumerate(c.extra_groups)
    ]
    for field, value, cap in caps:
        if value is not None and value > cap:
            msg = f"must be at most {cap:,} (got {value:,})"
            raise SpecError(msg, source=source, field=f"{prefix}{field}")


def _number(x: Any) -> float:
    """A JSON number as a float; anything else (``None``) as NaN, i.e. not an answer."""
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else math.nan


def _check_hours(plan: Plan, time: Mapping[str, Any], cap: float, prefix: str) -> None:
    """Training hours, then wall-clock hours, within the cap this API computes."""
    compute, wall = _number(time.get("compute_hours")), _number(time.get("wall_hours"))
    if not (math.isfinite(compute) and compute <= cap):
        if plan.run.hours is not None:
            field, given = "run.hours", f"{plan.run.hours:g} h of training is"
        else:
            field = "model.tokens"
            given = (
                f"{plan.model.tokens:g} tokens of a {plan.model.params:g}-parameter model take "
                f"{compute:g} h of training,"
            )
        msg = f"{given} over the {cap:,.0f} h (about {cap / 8766:,.0f} years) this API computes"
        raise SpecError(msg, source=_BODY, field=f"{prefix}{field}")
    if not (math.isfinite(wall) and wall <= cap):
        msg = (
            f"overheads stretch {compute:,.1f} h of training to {wall:g} h of wall-clock, over "
            f"the {cap:,.0f} h this API computes; check checkpoint.*, evaluation.* and "
            "reliability.* for an outsized value"
        )
        raise SpecError(msg, source=_BODY, field=prefix.rstrip(".") or "plan")


def check_forecast(plan: Plan, out: Mapping[str, Any], *, limits: Limits, prefix: str) -> None:
    """422 instead of a 200 carrying ``null`` costs (overflow) or a centuries-long run."""
    _check_hours(plan, out.get("time", {}), limits.max_wall_hours, prefix)
    bad = [k for k, v in out.get("by_category", {}).items() if not math.isfinite(_number(v))]
    bad = bad or [k for k in ("quote_usd", "total_usd") if not math.isfinite(_number(out.get(k)))]
    if bad:
        msg = (
            f"the bill is not a finite number ({', '.join(bad)} overflow); a value in the plan "
            "is far too large"
        )
        raise SpecError(msg, source=_BODY, field=prefix.rstrip(".") or "plan")


def _nested(exc: SpecError, prefix: str) -> SpecError:
    """The same error with its field under ``prefix`` (``plan.run.hours`` in a simulate body)."""
    text = str(exc).removeprefix(f"{exc.source}: ").removeprefix(f"{exc.field}: ")
    # ``plan`` is the plan as a whole (a check across sections): the body's own key names it.
    field = f"{prefix}.{exc.field}" if exc.field and exc.field != "plan" else prefix
    return SpecError(text, source=exc.source, field=field)


@dataclass(frozen=True, slots=True)
class Pricing:
    """What every route prices with: the catalog, the pinned date and the server's caps."""

    catalog: Catalog
    today: date | None
    limits: Limits

    def plan(self, body: Mapping[str, Any], *, prefix: str = "", source: str = _BODY) -> Plan:
        """A valid plan within this server's caps (``prefix`` names where it sits in the body)."""
        try:
            plan = plan_from_dict(body, source=source)
        except SpecError as exc:
            raise (_nested(exc, prefix) if prefix else exc) from None
        check_plan(plan, limits=self.limits, prefix=f"{prefix}." if prefix else "", source=source)
        return plan

    def checked(self, body: Mapping[str, Any], *, prefix: str = "", planner: bool = False) -> Plan:
        """A valid plan whose own forecast is finite and within the caps.

        For the planner the template need not be feasible itself (it may not fit in memory at
        its own node count): a plan the library refuses is left for ``optimize`` to judge.
        """
        plan = self.plan(body, prefix=prefix)
        try:
            out = forecast_plan(plan, self.catalog, today=self.today).as_dict()
        except TrainbillError:
            if planner:
                return plan
            raise
        check_forecast(plan, out, limits=self.limits, prefix=f"{prefix}." if prefix else "")
        return plan
