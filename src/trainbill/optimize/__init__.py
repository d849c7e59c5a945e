"""Planner: the cheapest instance, cluster size, cloud, purchase mix and checkpoint interval.

The article's advice (right-size, buy Savings Plans for the baseline, use spot when
interruptions are tolerable, consider other clouds) as a search instead of opinions.

How the search stays consistent with ``forecast``: it *is* the forecast's code. For every
(instance, node count, orchestrator) the real ``usage_for`` works out the run (time model,
checkpoint stall, interruption rates); ``Usage.with_schedule`` re-derives it over the
interval × spot-share grid with NumPy arrays (the rule ``usage_for`` itself uses), and the real
cost drivers price every Savings Plan option of that grid at once (``costs.price_arrays``: the
drivers' arithmetic broadcasts, and costs are added in ledger order, so a grid point costs
exactly what ``forecast`` says for its candidate plan). Nothing is fitted, composed or probed.
The Savings Plan term and coverage are the plan's own fields, passed through ``usage_for``
unchanged, so each option replaces them on the usage.

Objective and constraints (minimise over the grid)::

    objective   = expected total (forecast's total_usd)            default
                | P90 total (normal approximation, below)           objective="p90"
    subject to  wall hours (P90 wall hours with "p90") <= deadline_hours
                objective cost <= budget_usd
                model state fits the cluster's HBM (when the model size is known)

P90: failures and reclaims are Poisson with the expected counts m the forecast uses; each loses
restart + U(0, interval) hours, so the lost hours have variance m·(L² + I²/12) (compound
Poisson, L the mean loss per event). P90 wall hours = mean + 1.2816·sd; the P90 cost is the
drivers' price of the run that loses those 1.2816·sd extra hours (``_with_p90``). The normal
approximation is rough when m
is below a few events; it ignores price uncertainty.

Plans that give only ``run.hours`` carry no FLOP count, so hours are scaled to a candidate
cluster by the GPU-count ratio and the peak-throughput ratio (dense peak at the plan's
precision): hours' = hours × (G₀ · peak₀) / (G · peak). Plans with ``model.params`` and
``model.tokens`` leave the hours to the time model.

Savings Plan coverage is searched only for the terms the caller names (default: the plan's own
term): the ledger treats a commitment as already bought, so a one-off run would otherwise always
"buy" a 3-year plan for free. Size a commitment with ``trainbill.commit`` instead.
"""

from trainbill.optimize.caveats import Caveat, CaveatKind
from trainbill.optimize.grid import P90_Z
from trainbill.optimize.results import Candidate, OptimizationResult, RightSizeRow
from trainbill.optimize.search import optimize
from trainbill.optimize.space import SearchSpace, candidate_plan, own_mix_space, search_instances
from trainbill.spec import ORCHESTRATORS

__all__ = [
    "ORCHESTRATORS",
    "P90_Z",
    "Candidate",
    "Caveat",
    "CaveatKind",
    "OptimizationResult",
    "RightSizeRow",
    "SearchSpace",
    "candidate_plan",
    "optimize",
    "own_mix_space",
    "search_instances",
]
