"""Hardware failures: work lost since the last checkpoint plus the restart after each one.

Pricing rule: expected interruptions = rate per GPU-day × GPUs × exposed hours / 24 (rate
from the plan, else the Llama 3 405B figure in ``reliability.gpu_failure_rate_per_gpu_day``);
each loses half a checkpoint interval on average plus the restart time (by orchestrator),
billed at the blended cluster rate. The counting is ``usage.interruptions``'s.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import cluster_rate, cluster_rate_provenance, cluster_rate_source
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "failures"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Cluster-hours lost to hardware failures."""
    if usage.reliability.failure_rate_per_gpu_day <= 0:
        return
    rate, words = cluster_rate(catalog, usage)
    u = usage
    yield Charge(
        category=CATEGORY,
        item="work lost and restarts after hardware failures",
        quantity=usage.reliability.failure_lost_hours,
        unit="cluster-hour",
        unit_price_usd=rate,
        basis=lambda: (
            f"{u.reliability.failure_events:.2f} failures "
            f"({u.reliability.failure_rate_per_gpu_day:.2e}/GPU-day × {u.gpus} GPUs × "
            f"{u.exposed_hours:,.1f} h / 24) × ({u.checkpoint.interval_hours:g} h interval / 2 + "
            f"{u.reliability.restart_hours:g} h restart on {u.orchestrator}); {words()}"
        ),
        source=cluster_rate_source(catalog, usage),
        provenance=cluster_rate_provenance(catalog, usage),
        driver=__name__,
    )
