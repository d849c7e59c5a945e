"""Orchestration: SageMaker HyperPod's ml.* instance price over EC2, or the EKS control plane.

Pricing rule. HyperPod bills SageMaker ``ml.<instance>`` instance-hours instead of EC2's
(SageMaker HyperPod pricing: "see Amazon SageMaker Pricing" for the per-hour rates), and its
nodes are held for the whole wall-clock. The compute lines price the EC2 rate, so this line is
the difference: (ml.* on-demand − EC2 on-demand) × on-demand share × nodes × wall hours, both
rates from ``prices.csv``. Spot nodes carry no premium here: HyperPod supports Spot
(``orchestration.hyperpod_spot``) but no HyperPod Spot rate is published in the catalog, so
they stay at the EC2 Spot rate and the forecast warns. Without a published ``ml.*`` price there
is no line and a warning says so (the seed article's "~20 %" is a claim, not a price); an ml.*
price below the EC2 one is a $0 premium, never a credit. EKS:
clusters × wall hours × control-plane $/hour. Raw EC2: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from trainbill.catalog import Catalog, Provenance
from trainbill.costs._arrays import some
from trainbill.costs._pricing import instance_rate, sagemaker_rate, service_rate
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "orchestration"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """HyperPod ml.* premium over EC2 or EKS control-plane hours."""
    if usage.orchestrator == "hyperpod":
        inst = usage.instance.instance
        ml = sagemaker_rate(catalog, usage, inst)
        if ml is None or not some(usage.purchase.spot_fraction < 1):
            return  # usage.warnings says what is not priced and why
        ec2 = instance_rate(catalog, usage, "on_demand")
        od_nodes = usage.nodes * (1 - usage.purchase.spot_fraction)
        unit = "chip-hour" if usage.instance.billing == "chip" else "instance-hour"
        premium = Charge(
            category=CATEGORY,
            item=f"SageMaker HyperPod ml.{inst} over EC2",
            quantity=od_nodes * usage.wall_hours,
            unit=unit,
            unit_price_usd=ml.usd - ec2.usd,
            basis=lambda: (
                f"{usage.nodes} nodes × {1 - usage.purchase.spot_fraction:.0%} on-demand × "
                f"{usage.wall_hours:,.1f} h wall-clock × (ml.{inst} ${ml.usd:,.4g} − EC2 "
                f"${ec2.usd:,.4g}); spot nodes at the EC2 Spot rate"
            ),
            source=f"ml.*: {ml.source}; EC2: {ec2.source}",
            provenance=Provenance.weakest(ml.provenance, ec2.provenance),
            driver=__name__,
            service_category="AI and Machine Learning",
        )
        yield premium if ml.usd >= ec2.usd else _no_premium(premium)
    elif usage.orchestrator == "eks":
        cp = service_rate(catalog, usage, "eks.control_plane")
        clusters = int(catalog.value("orchestration.eks_clusters"))
        yield Charge(
            category=CATEGORY,
            item="EKS control plane",
            quantity=clusters * usage.wall_hours,
            unit="cluster-hour",
            unit_price_usd=cp.usd,
            basis=lambda: f"{clusters} EKS cluster × {usage.wall_hours:,.1f} h",
            source=cp.source,
            provenance=cp.provenance,
            driver=__name__,
            service_category="Compute",
        )


def _no_premium(premium: Charge) -> Charge:
    """The premium line when the ml.* price is below the EC2 rate it is compared with (an
    instance priced at its Capacity Block rate, prices of different dates): a managed service
    never refunds part of the instances under it, so the premium is $0 and the compute lines
    stand as priced."""
    said = premium.basis
    return replace(
        premium,
        unit_price_usd=0.0,
        basis=lambda: f"{said()}; the ml.* price is below EC2's: no premium ($0, not a refund)",
    )
