"""Orchestration: the managed-service premium (SageMaker HyperPod) or control plane (EKS).

Pricing rule: HyperPod bills ``ml.*`` instance-hours at a premium over EC2; the premium
fraction (``orchestration.hyperpod_instance_premium``) × the blended node rate × all billed
node-hours. EKS: clusters × wall hours × control-plane $/hour. Raw EC2: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import cluster_rate, service_rate
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "orchestration"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """HyperPod instance premium or EKS control-plane hours."""
    if usage.orchestrator == "hyperpod":
        rate, words = cluster_rate(catalog, usage)
        a = catalog.assumption("orchestration.hyperpod_instance_premium")
        premium = float(a.value)
        yield LineItem(
            category=CATEGORY,
            item="SageMaker HyperPod instance premium",
            quantity=usage.wall_hours,
            unit="cluster-hour",
            unit_price_usd=premium * rate,
            basis=f"{premium:.0%} premium on ml.* instances × {usage.wall_hours:,.1f} h; {words}",
            source=a.cite(),
            driver=__name__,
            service_category="AI and Machine Learning",
        )
    elif usage.orchestrator == "eks":
        cp = service_rate(catalog, usage, "eks.control_plane")
        clusters = int(catalog.value("orchestration.eks_clusters"))
        yield LineItem(
            category=CATEGORY,
            item="EKS control plane",
            quantity=clusters * usage.wall_hours,
            unit="cluster-hour",
            unit_price_usd=cp.usd,
            basis=f"{clusters} EKS cluster × {usage.wall_hours:,.1f} h",
            source=cp.source,
            driver=__name__,
            service_category="Compute",
        )
