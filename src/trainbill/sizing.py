"""The node-count sweep: the plan priced at sizes around its own, and its cost/time Pareto front.

Its own module so the report (``analysis``), the web API and the advice (``headline``, which
``analysis`` imports) can all price sizes the same way without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import TrainbillError
from trainbill.forecasting import Forecast, forecast
from trainbill.spec import Plan
from trainbill.usage import nearest_slice, tpu_slice_sizes

__all__ = ["SIZING_FACTORS", "SizingPoint", "at_node_count", "pareto_front", "right_sizing"]


#: Node counts tried for the right-sizing curve, as multiples of the plan's node count.
SIZING_FACTORS: tuple[float, ...] = (0.25, 1 / 3, 0.5, 2 / 3, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)


@record
class SizingPoint:
    """The plan priced at one node count."""

    nodes: int
    gpus: int
    wall_hours: float
    total_usd: float
    quote_usd: float
    current: bool


def right_sizing(
    plan: Plan,
    catalog: Catalog,
    *,
    today: date | None = None,
    base: Forecast | None = None,
    price: Callable[[Plan], Forecast] | None = None,
) -> tuple[tuple[SizingPoint, ...], str]:
    """Price the plan at node counts around its own; return the points and how hours were set.

    With ``model.params`` and ``model.tokens`` (and no fixed ``run.hours``) the time model
    derives the hours at each size, including its communication and straggler losses. With
    fixed ``run.hours`` there is no model to scale, so the sweep assumes the node-hours stay
    constant (perfect scaling) and says so: an optimistic curve, labelled as such.

    ``price`` prices one size (default: ``forecast`` on ``catalog``); a calibrated caller
    passes the calibrated forecast, so every size is priced as the plan is (a profile's
    measured MFU holds at another node count of the same instance, the time model
    extrapolating it with its scaling).
    """

    def priced(variant: Plan) -> Forecast:
        return price(variant) if price else forecast(variant, catalog, today=today)

    fc = base or priced(plan)
    n0 = fc.usage.nodes
    fixed = plan.run.hours
    if fixed is None:
        basis = "hours derived by the time model at each node count"
    else:
        basis = (
            f"run.hours is fixed at {fixed:g} h for {n0} nodes, so other sizes assume the same "
            f"node-hours (perfect scaling: hours × {n0} / nodes); give model.params and "
            "model.tokens for the time model's own scaling"
        )
    counts = sorted({max(1, round(n0 * f)) for f in SIZING_FACTORS})
    slices = tpu_slice_sizes(catalog, fc.usage.instance, max(counts) * 2)
    if slices is not None:  # a TPU is sold by slice: the sold size nearest each factor
        counts = sorted({nearest_slice(slices, n0 * f) for f in SIZING_FACTORS} | {n0})
    points: list[SizingPoint] = []
    for n in counts:
        variant = at_node_count(plan, fc, n)
        try:
            f = fc if n == n0 else priced(variant)
        except TrainbillError:
            continue
        points.append(
            SizingPoint(
                nodes=n,
                gpus=f.usage.gpus,
                wall_hours=f.usage.wall_hours,
                total_usd=f.total_usd,
                quote_usd=f.quote_usd,
                current=n == n0,
            )
        )
    return tuple(points), basis


def at_node_count(plan: Plan, fc: Forecast, nodes: int) -> Plan:
    """The plan on ``nodes`` nodes of the instance its forecast ``fc`` resolved: fixed
    ``run.hours`` scaled to keep the node-hours (perfect scaling, as ``right_sizing`` says)."""
    n0, fixed = fc.usage.nodes, plan.run.hours
    cluster = plan.cluster.model_copy(
        update={"nodes": nodes, "gpus": None, "instance": fc.usage.instance.instance}
    )
    run = plan.run if fixed is None else plan.run.model_copy(update={"hours": fixed * n0 / nodes})
    return plan.model_copy(update={"cluster": cluster, "run": run})


def pareto_front(points: Sequence[SizingPoint]) -> tuple[SizingPoint, ...]:
    """Points no other point beats on both wall-clock hours and total cost, fastest first."""
    front = [
        p
        for p in points
        if not any(
            (q.wall_hours <= p.wall_hours and q.total_usd <= p.total_usd)
            and (q.wall_hours < p.wall_hours or q.total_usd < p.total_usd)
            for q in points
        )
    ]
    return tuple(sorted(front, key=lambda p: (p.wall_hours, p.total_usd)))
