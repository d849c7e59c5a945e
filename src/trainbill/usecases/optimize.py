"""Optimize a plan: the planner's search for the cheapest plan meeting a deadline and a budget
(``trainbill optimize``, ``POST /v1/optimize``), with the best plan's calibration cautions and,
asked for, its launcher export.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.calibration import calibrate, plan_cautions
from trainbill.catalog import Catalog
from trainbill.errors import SpecError, TrainbillError
from trainbill.forecasting import Caution
from trainbill.optimize import (
    Candidate,
    OptimizationResult,
    SearchSpace,
    optimize,
    search_instances,
)
from trainbill.optimize.search import Objective
from trainbill.spec import Plan

__all__ = [
    "DEFAULT_NODE_STEPS",
    "Candidate",
    "OptimizationResult",
    "OptimizedPlan",
    "SearchSpace",
    "optimize_plan",
    "search_cells",
]

#: Node counts the planner tries when none are named: 13 √2 steps (and the plan's own).
DEFAULT_NODE_STEPS = 13


@record
class OptimizedPlan:
    """The planner's result, the best plan's calibration cautions (worded as its forecast words
    them) and the launcher description asked for (None: not asked)."""

    result: OptimizationResult
    calibrated: bool = False
    cautions: tuple[Caution, ...] = ()
    export: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """``trainbill optimize --json``; with calibrations, their cautions too (uncalibrated it
        is what ``POST /v1/optimize`` answers)."""
        out = self.result.as_dict()
        if self.calibrated:
            out["cautions"] = [c.as_dict() for c in self.cautions]
        return out


def search_cells(
    plan: Plan,
    catalog: Catalog,
    space: SearchSpace,
    clouds: tuple[str, ...] | None,
    *,
    allow_stand_ins: bool,
    today: date | None,
) -> tuple[int, int] | None:
    """Instance types × node counts the planner will search (exactly the named instances, or
    the named clouds' or else the plan's own cloud and vendor, the plan's own included once,
    × the named node counts with the plan's own where its instance is searched, or the default
    steps and the plan's); None for a search the planner itself refuses (it names why)."""
    from trainbill.usage import resolve_cluster

    try:
        found, _ = search_instances(
            plan, catalog, space, clouds, allow_stand_ins=allow_stand_ins, today=today
        )
        own_inst, own_nodes = resolve_cluster(plan, catalog)
    except TrainbillError:
        return None
    names = {i.instance for i in found}
    own = {own_nodes} if own_inst.instance in names else set()
    n_nodes = len(set(space.nodes) | own) if space.nodes is not None else DEFAULT_NODE_STEPS + 1
    return len(names), n_nodes


def _check_size(
    plan: Plan,
    catalog: Catalog,
    space: SearchSpace,
    clouds: tuple[str, ...] | None,
    *,
    allow_stand_ins: bool,
    today: date | None,
    max_cells: int,
) -> None:
    """Refuse, before any work, a search over more than ``max_cells`` instance × node cells."""
    cells = search_cells(plan, catalog, space, clouds, allow_stand_ins=allow_stand_ins, today=today)
    if cells is None:
        return
    n_inst, n_nodes = cells
    if n_inst * n_nodes > max_cells:
        msg = (
            f"search too large: {n_inst} instance types × {n_nodes} node counts = "
            f"{n_inst * n_nodes:,} (at most {max_cells:,}); name fewer "
            "space.instances or space.nodes, or fewer clouds"
        )
        raise SpecError(msg, source="request body", field="space")


def optimize_plan(
    plan: Plan,
    catalog: Catalog,
    calibrations: Sequence[Any] = (),
    *,
    space: SearchSpace | None = None,
    objective: Objective = "expected",
    deadline_hours: float | None = None,
    budget_usd: float | None = None,
    clouds: Sequence[str] | None = None,
    allow_stand_ins: bool = False,
    export: str | None = None,
    max_search_cells: int | None = None,
    today: date | None = None,
) -> OptimizedPlan:
    """Search around the plan on the calibrated catalog (bill rates only: the grid's plans have
    no measured MFU, so the front ends refuse a profile).

    ``max_search_cells`` (the web app's cap) refuses a search over more instance types × node
    counts; ``export="skypilot"`` also describes the best plan as a SkyPilot task YAML.

    Raises:
        InfeasibleError: nothing meets the constraints (it names the binding one).
    """
    space = space if space is not None else SearchSpace()
    named_clouds = tuple(clouds) if clouds is not None else None
    calibrated = calibrate(plan, catalog, calibrations)
    if max_search_cells is not None:
        _check_size(
            plan, catalog, space, named_clouds, allow_stand_ins=allow_stand_ins, today=today,
            max_cells=max_search_cells,
        )  # fmt: skip
    result = optimize(
        plan, calibrated.catalog, space=space, objective=objective,
        deadline_hours=deadline_hours, budget_usd=budget_usd, clouds=named_clouds,
        today=today, allow_stand_ins=allow_stand_ins,
    )  # fmt: skip
    cautions = plan_cautions(result.best_plan, calibrated, today=today) if calibrations else ()
    task = None
    if export is not None:
        from trainbill.importers.export import export_skypilot

        task = export_skypilot(result.best_plan, calibrated.catalog)
    return OptimizedPlan(
        result=result, calibrated=bool(calibrations), cautions=cautions, export=task
    )
