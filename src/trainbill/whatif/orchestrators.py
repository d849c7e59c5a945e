"""The same job on raw EC2, SageMaker HyperPod and EKS (+ Karpenter): each a full forecast
with only the orchestrator swapped."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import Forecast, forecast
from trainbill.spec import Plan
from trainbill.usage import (
    hyperpod_spot_note,
    hyperpod_unpriced,
    sagemaker_price,
)

__all__ = [
    "ORCHESTRATORS",
    "OrchestratorRow",
    "cheapest_priced",
    "compare_orchestrators",
    "with_orchestrator",
]

ORCHESTRATORS = ("ec2", "hyperpod", "eks")
_LABELS = {"ec2": "Raw EC2", "hyperpod": "SageMaker HyperPod", "eks": "EKS + Karpenter"}


# --- orchestrators ---------------------------------------------------------------------------
@record
class OrchestratorRow:
    """One orchestrator's forecast of the same job."""

    orchestrator: str
    label: str
    forecast: Forecast
    orchestration_usd: float
    restart_hours: float
    disruption_usd: float
    setup_time: str
    failure_risk: str
    article_cost_100h_usd: float
    #: Charges of this orchestrator the catalog cannot price (HyperPod's ml.* premium, a
    #: HyperPod Spot rate; ``usage.hyperpod_unpriced``): the total is then a lower bound.
    unpriced: tuple[str, ...] = ()
    #: How the provider bills this orchestrator's time (``orchestration.billing_<o>``): the
    #: ledger bills the exact wall-clock, which is what per-second billing charges.
    billing: str = ""
    #: False when the managed-service premium itself (HyperPod's ml.* rate) could not be priced
    #: (``usage.sagemaker_price`` is None): the orchestration figure is then a gap, said on the
    #: row, never shown as a $0 price.
    premium_priced: bool = True
    #: What this orchestrator changed in the plan as bought (``usage.hyperpod_spot_note``: no
    #: Spot on HyperPod before HyperPod offered it), said beside the row.
    notes: tuple[str, ...] = ()

    @property
    def total_usd(self) -> float:
        """The real bill under this orchestrator."""
        return self.forecast.total_usd

    @property
    def per_100h_usd(self) -> float:
        """The real bill per 100 wall-clock hours of this run: the article's "cost per 100 h"
        column worked out from the forecast (total ÷ wall hours × 100) instead of copied."""
        return self.forecast.total_usd / self.forecast.usage.wall_hours * 100.0


def cheapest_priced(rows: Sequence[OrchestratorRow]) -> OrchestratorRow | None:
    """The cheapest orchestrator whose bill is whole: a row missing a charge (``unpriced``)
    would win by what it leaves out. None when every row misses one."""
    priced = [r for r in rows if not r.unpriced]
    return min(priced, key=lambda r: r.total_usd) if priced else None


def with_orchestrator(plan: Plan, orchestrator: str) -> Plan:
    """The plan with its orchestrator swapped and its restart time left to that orchestrator.

    A plan's own ``reliability.restart_hours`` describes its own orchestrator, so it is cleared:
    otherwise every row would share one restart time and the comparison would be moot.
    """
    cluster = plan.cluster.model_copy(update={"orchestrator": orchestrator})
    rel = plan.reliability.model_copy(update={"restart_hours": None})
    return plan.model_copy(update={"cluster": cluster, "reliability": rel})


def compare_orchestrators(
    plan: Plan, catalog: Catalog, *, today: date | None = None
) -> list[OrchestratorRow]:
    """Forecast the plan on each orchestrator (rows in ``ORCHESTRATORS`` order).

    The article's comparison is of AWS services (raw EC2, SageMaker HyperPod, EKS); a GCP or
    Azure plan has no such choice, so it is an error rather than AWS fees on another cloud.
    """
    if plan.cluster.provider != "aws":
        msg = (
            f"compare-orchestrators compares AWS orchestrators ({', '.join(ORCHESTRATORS)}); "
            f"this plan's provider is {plan.cluster.provider}, which offers only self-managed VMs"
        )
        raise SpecError(msg, field="cluster.provider")
    rows = []
    for o in ORCHESTRATORS:
        fc = forecast(with_orchestrator(plan, o), catalog, today=today)
        cats = fc.ledger.by_category()
        u = fc.usage
        spot = float(u.purchase.spot_fraction)
        gaps = hyperpod_unpriced(catalog, u.instance, o, spot, u.provider, u.region, u.as_of)
        rows.append(
            OrchestratorRow(
                orchestrator=o,
                label=_LABELS[o],
                forecast=fc,
                orchestration_usd=cats["orchestration"],
                restart_hours=fc.usage.reliability.restart_hours,
                disruption_usd=cats["failures"] + cats["spot_reclaim"],
                setup_time=str(catalog.value(f"whatif.setup_time_{o}")),
                failure_risk=str(catalog.value(f"whatif.failure_risk_{o}")),
                article_cost_100h_usd=float(catalog.value(f"whatif.article_cost_100h_{o}")),
                unpriced=gaps,
                notes=hyperpod_spot_note(catalog, o, plan.purchase.spot_fraction, u.run_date),
                billing=str(catalog.value(f"orchestration.billing_{o}")),
                premium_priced=o != "hyperpod"
                or sagemaker_price(
                    catalog,
                    u.instance.instance,
                    provider=u.provider,
                    region=u.region,
                    as_of=u.as_of,
                )
                is not None,
            )
        )
    return rows
