"""Two forecasts side by side: what each line, category and headline figure does, and why.

A change to a training plan is reviewed like any infrastructure change: as a diff (Infracost's
cost comment on a pull request). Lines are matched by (category, item); a line only one side
has is compared with nothing (quantity 0). "Why" is the flat diff of both plans' resolved
inputs, each line naming those of the plan sections its driver reads (``DRIVER_INPUTS``), next
to whether its quantity or its unit price moved.

Pure: takes two priced forecasts and their plans; rendering is the CLI's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from trainbill._record import record
from trainbill.forecasting import RANGE_LABEL, Forecast
from trainbill.ledger import CATEGORIES, LineItem
from trainbill.spec import Plan

__all__ = [
    "DRIVER_INPUTS",
    "CategoryDelta",
    "ForecastDiff",
    "Headline",
    "InputChange",
    "LineDelta",
    "diff_forecasts",
    "resolved_inputs",
]

#: Plan sections (and ``resolved.*`` values) each category's cost depends on. Time lines
#: (compute, stalls, evaluation, checkpoints, failures, reclaims) depend on anything that moves
#: the hours or the cluster rate; the others mostly on their own section plus the cluster.
_TIME = ("run", "model", "cluster", "purchase", "prices", "reliability", "resolved")
DRIVER_INPUTS: Mapping[str, tuple[str, ...]] = {
    "compute": _TIME,
    "sync_stall": _TIME,
    "evaluation": (*_TIME, "evaluation"),
    "checkpoint": (*_TIME, "checkpoint"),
    "storage": ("storage", "checkpoint", "data", "cluster", "run", "model", "prices", "resolved"),
    "data_transfer": ("data", "cluster", "run", "model", "prices", "resolved"),
    "networking": ("network", "data", "cluster", "run", "model", "prices", "resolved"),
    "monitoring": ("monitoring", "cluster", "run", "model", "prices", "resolved"),
    "spot_reclaim": (*_TIME, "checkpoint"),
    "failures": (*_TIME, "checkpoint"),
    "orchestration": ("cluster", "run", "model", "prices", "resolved"),
    "discount": ("purchase", "cluster", "run", "model", "prices", "resolved"),
}


def _pct(base: float, new: float) -> float | None:
    """Percent change, or None when the base is zero (a new cost has no percentage)."""
    return 100.0 * (new - base) / abs(base) if base else None


@record
class Headline:
    """One headline figure (total, quote, P10/P90, hours) on both sides."""

    name: str
    unit: str
    base: float | None
    new: float | None

    @property
    def delta(self) -> float | None:
        """New minus base; None when either side lacks the figure."""
        return None if self.base is None or self.new is None else self.new - self.base

    @property
    def percent(self) -> float | None:
        """Change as a percentage of the base."""
        return None if self.base is None or self.new is None else _pct(self.base, self.new)


@record
class CategoryDelta:
    """One ledger category on both sides."""

    category: str
    base_usd: float
    new_usd: float

    @property
    def delta_usd(self) -> float:
        """New minus base."""
        return self.new_usd - self.base_usd

    @property
    def percent(self) -> float | None:
        """Change as a percentage of the base."""
        return _pct(self.base_usd, self.new_usd)


@record
class LineDelta:
    """One (category, item) line on both sides; a missing side is ``None``."""

    category: str
    item: str
    base: LineItem | None
    new: LineItem | None
    #: What moved on the line itself: its quantity, its unit price, or the whole line.
    moved: str
    #: The differing inputs of the plan sections this category's driver reads.
    inputs: tuple[str, ...]

    @property
    def why(self) -> str:
        """``moved`` with the inputs that can have moved it."""
        if self.moved == "unchanged" or not self.inputs:
            return self.moved
        return f"{self.moved} (inputs: {', '.join(self.inputs)})"

    @property
    def base_usd(self) -> float:
        """Base cost (0 when the base has no such line)."""
        return self.base.cost_usd if self.base else 0.0

    @property
    def new_usd(self) -> float:
        """New cost (0 when the new plan has no such line)."""
        return self.new.cost_usd if self.new else 0.0

    @property
    def delta_usd(self) -> float:
        """New minus base."""
        return self.new_usd - self.base_usd

    @property
    def percent(self) -> float | None:
        """Change as a percentage of the base."""
        return _pct(self.base_usd, self.new_usd)


@record
class InputChange:
    """A resolved plan input that differs between the two plans."""

    key: str
    base: Any
    new: Any


@record
class ForecastDiff:
    """Everything a reviewer of a plan change reads, in the order they read it."""

    base_name: str
    new_name: str
    base_as_of: str
    new_as_of: str
    base_catalog: str
    new_catalog: str
    currency: str
    notes: tuple[str, ...]
    headlines: tuple[Headline, ...]
    categories: tuple[CategoryDelta, ...]
    lines: tuple[LineDelta, ...]
    inputs: tuple[InputChange, ...]

    @property
    def total(self) -> Headline:
        """The real bill's headline (the first)."""
        return self.headlines[0]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (amounts in USD, unrounded)."""

        def side(ln: LineItem | None) -> dict[str, Any] | None:
            if ln is None:
                return None
            return {
                "quantity": ln.quantity,
                "unit": ln.unit,
                "unit_price_usd": ln.unit_price_usd,
                "cost_usd": ln.cost_usd,
            }

        return {
            "base": {
                "name": self.base_name,
                "prices_as_of": self.base_as_of,
                "catalog": self.base_catalog,
            },
            "new": {
                "name": self.new_name,
                "prices_as_of": self.new_as_of,
                "catalog": self.new_catalog,
            },
            "currency": self.currency,
            "notes": list(self.notes),
            "headlines": [
                {
                    "name": h.name,
                    "unit": h.unit,
                    "base": h.base,
                    "new": h.new,
                    "delta": h.delta,
                    "percent": h.percent,
                }
                for h in self.headlines
            ],
            "categories": [
                {
                    "category": c.category,
                    "base_usd": c.base_usd,
                    "new_usd": c.new_usd,
                    "delta_usd": c.delta_usd,
                    "percent": c.percent,
                }
                for c in self.categories
            ],
            "lines": [
                {
                    "category": d.category,
                    "item": d.item,
                    "base": side(d.base),
                    "new": side(d.new),
                    "delta_usd": d.delta_usd,
                    "percent": d.percent,
                    "moved": d.moved,
                    "inputs": list(d.inputs),
                }
                for d in self.lines
            ],
            "inputs": [{"input": i.key, "base": i.base, "new": i.new} for i in self.inputs],
        }


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value


def resolved_inputs(plan: Plan, fc: Forecast) -> dict[str, Any]:
    """The plan's values (defaults included) flattened to ``section.key``, plus what the forecast
    resolved from them (``resolved.*``: the instance a GPU picked, nodes from GPUs, the price
    date), so a change that moves no stated value but moves a resolved one still shows."""
    out: dict[str, Any] = {}
    _flatten("", plan.model_dump(mode="json"), out)
    u = fc.usage
    for key, value in (
        ("provider", u.provider), ("region", u.region), ("instance", u.instance.instance),
        ("accelerator", u.accelerator.id), ("nodes", u.nodes), ("gpus", u.gpus),
        ("orchestrator", u.orchestrator), ("spot_fraction", u.purchase.spot_fraction),
        ("prices_as_of", u.as_of.isoformat()), ("run_date", u.run_date.isoformat()),
        ("compute_hours", round(u.compute.hours, 6)),
    ):  # fmt: skip
        out[f"resolved.{key}"] = value
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return bool(a == b)


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:,.4g}"


def _moved(base: LineItem | None, new: LineItem | None) -> str:
    if base is None:
        return "new line"
    if new is None:
        return "line removed"
    parts = []
    if not math.isclose(base.quantity, new.quantity, rel_tol=1e-9):
        parts.append(f"quantity {_num(base.quantity)} → {_num(new.quantity)} {new.unit}")
    if not math.isclose(base.unit_price_usd, new.unit_price_usd, rel_tol=1e-9):
        parts.append(f"unit price ${_num(base.unit_price_usd)} → ${_num(new.unit_price_usd)}")
    return "; ".join(parts) if parts else "unchanged"


def _line_inputs(category: str, inputs: tuple[InputChange, ...]) -> tuple[str, ...]:
    sections = DRIVER_INPUTS.get(category, ())
    return tuple(i.key for i in inputs if i.key.split(".", 1)[0] in sections)


def diff_forecasts(base: Forecast, new: Forecast, base_plan: Plan, new_plan: Plan, *,
                   base_name: str, new_name: str) -> ForecastDiff:  # fmt: skip
    """Both forecasts side by side; ``notes`` says when they were priced on different dates or
    catalogs (the delta then mixes the change with price moves)."""
    bi, ni = resolved_inputs(base_plan, base), resolved_inputs(new_plan, new)
    changed = {
        k: (bi.get(k), ni.get(k))
        for k in sorted(set(bi) | set(ni))
        if not _same(bi.get(k), ni.get(k))
    }
    changed.pop("run.name", None)  # a label, it prices nothing

    def echoes(key: str) -> bool:
        """A resolved value that only repeats a stated change (cluster.nodes 32 → 16)."""
        last = key.removeprefix("resolved.")
        return key.startswith("resolved.") and any(
            k != key and k.rsplit(".", 1)[-1] == last and v == changed[key]
            for k, v in changed.items()
        )

    inputs = tuple(
        InputChange(key=k, base=b, new=n) for k, (b, n) in changed.items() if not echoes(k)
    )
    notes: list[str] = []
    b_as_of, n_as_of = base.usage.as_of.isoformat(), new.usage.as_of.isoformat()
    if b_as_of != n_as_of:
        notes.append(f"different price dates: base priced as of {b_as_of}, new as of {n_as_of}; "
                     "part of the delta is price changes, not the plan change")  # fmt: skip
    if base.catalog_version != new.catalog_version:
        notes.append(f"different catalogs: base {base.catalog_version}, new {new.catalog_version}")
    bh, nh = base.as_dict(), new.as_dict()
    headlines = (
        Headline(name="real bill", unit="USD", base=base.total_usd, new=new.total_usd),
        # The quote is the on-demand list price of the planned node-hours; the planned bill is
        # the same hours at the plan's purchase mix (``Forecast.planned_usd``).
        Headline(name="quote (on-demand list)", unit="USD", base=base.quote_usd, new=new.quote_usd),
        Headline(
            name="planned (purchase mix)", unit="USD", base=base.planned_usd, new=new.planned_usd
        ),
        # The time model's range (80 % of similar runs), where either side has one: never
        # called P10/P90, the only P90 being the budget's (issue #42).
        *(
            (
                Headline(
                    name=f"bill, low end of the {RANGE_LABEL}",
                    unit="USD",
                    base=bh["total_usd_range_low"],
                    new=nh["total_usd_range_low"],
                ),
                Headline(
                    name=f"bill, high end of the {RANGE_LABEL}",
                    unit="USD",
                    base=bh["total_usd_range_high"],
                    new=nh["total_usd_range_high"],
                ),
            )
            if bh["total_usd_range_low"] is not None or nh["total_usd_range_low"] is not None
            else ()
        ),
        Headline(
            name="wall-clock hours", unit="h", base=base.usage.wall_hours, new=new.usage.wall_hours
        ),
        Headline(
            name="GPU-hours",
            unit="GPU-h",
            base=bh["time"]["gpu_hours"],
            new=nh["time"]["gpu_hours"],
        ),
    )
    bc, nc = base.ledger.by_category(), new.ledger.by_category()
    categories = tuple(
        CategoryDelta(category=c, base_usd=bc[c], new_usd=nc[c])
        for c in CATEGORIES
        if bc[c] or nc[c]
    )
    b_lines = {(ln.category, ln.item): ln for ln in base.ledger.lines}
    n_lines = {(ln.category, ln.item): ln for ln in new.ledger.lines}
    order = list(b_lines) + [k for k in n_lines if k not in b_lines]
    order.sort(key=lambda k: CATEGORIES.index(k[0]))  # stable: ledger order within a category
    lines = tuple(
        LineDelta(category=k[0], item=k[1], base=b_lines.get(k), new=n_lines.get(k),
                  moved=(m := _moved(b_lines.get(k), n_lines.get(k))),
                  inputs=() if m == "unchanged" else _line_inputs(k[0], inputs))
        for k in order
    )  # fmt: skip
    return ForecastDiff(
        base_name=base_name,
        new_name=new_name,
        base_as_of=b_as_of,
        new_as_of=n_as_of,
        base_catalog=base.catalog_version,
        new_catalog=new.catalog_version,
        currency="USD",  # every catalog price and ledger line is USD (the *_usd contract keys)
        notes=tuple(notes),
        headlines=headlines,
        categories=categories,
        lines=lines,
        inputs=inputs,
    )
