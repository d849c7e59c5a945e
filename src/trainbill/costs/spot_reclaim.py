"""Spot reclaims: work lost since the last checkpoint plus the restart, whole cluster waiting.

Pricing rule: expected reclaims = hazard × spot nodes × exposed hours (hazard from the plan,
else −ln(1 − p)/730 with p the Spot Advisor bucket's monthly rate); each loses half a
checkpoint interval of work on average plus the restart time, for every node (a gang-scheduled
job stops when any node goes). Billed at the blended cluster rate. In a simulation the totals
are sampled instead of expected. The counting is ``usage.interruptions``'s.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._arrays import some
from trainbill.costs._pricing import cluster_rate, cluster_rate_provenance, cluster_rate_source
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "spot_reclaim"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Cluster-hours lost to spot reclaims."""
    if not some(usage.purchase.spot_fraction > 0):
        return
    rate, words = cluster_rate(catalog, usage)
    u = usage
    yield Charge(
        category=CATEGORY,
        item="work lost and restarts after spot reclaims",
        quantity=usage.reliability.reclaim_lost_hours,
        unit="cluster-hour",
        unit_price_usd=rate,
        basis=lambda: (
            f"{u.reliability.reclaim_events:.2f} reclaims "
            f"({u.reliability.spot_reclaim_rate_per_node_hour:.2e}/node-hour × "
            f"{u.nodes * u.purchase.spot_fraction:g} spot nodes × {u.exposed_hours:,.1f} h) × "
            f"({u.checkpoint.interval_hours:g} h interval / 2 + {u.reliability.restart_hours:g} h "
            f"restart); {words()}"
        ),
        source=cluster_rate_source(catalog, usage),
        provenance=cluster_rate_provenance(catalog, usage),
        driver=__name__,
        pricing_category="Dynamic",
    )
