"""Evaluation: cluster-hours of validation passes run during training.

Pricing rule: evaluation hours = pure training hours × (evaluation steps ÷ steps between
evaluations) × (an evaluation step's time ÷ a training step's time), billed at the blended
cluster rate (the whole cluster evaluates while it does not train). An evaluation step is a
forward pass over a training-sized batch: a third of the step's FLOPs, no recompute, no
gradient sync or optimizer (``trainbill.usage``). Reads ``[defaults.evaluation]`` (Megatron-LM's
defaults: 100 steps every 1,000) unless the plan's ``[evaluation]`` says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._arrays import some
from trainbill.costs._pricing import cluster_rate, cluster_rate_provenance, cluster_rate_source
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "evaluation"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """One line: forward-only validation passes, when the plan evaluates at all."""
    if not some(usage.evaluation.hours > 0):
        return
    rate, words = cluster_rate(catalog, usage)
    u = usage
    yield Charge(
        category=CATEGORY,
        item="validation passes (forward only)",
        quantity=usage.evaluation.hours,
        unit="cluster-hour",
        unit_price_usd=rate,
        basis=lambda: (
            f"{u.compute.hours:,.2f} h × {u.evaluation.steps} eval steps every "
            f"{u.evaluation.interval_steps:,} steps × {u.evaluation.step_fraction:.3f} (an eval "
            "step's time per training step: forward only, no recompute, sync or optimizer); "
            f"{words()}"
        ),
        source=cluster_rate_source(catalog, usage),
        provenance=cluster_rate_provenance(catalog, usage),
        driver=__name__,
    )
