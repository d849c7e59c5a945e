"""Sync stall: cluster-hours spent waiting on communication, the pipeline and the slowest GPU.

Pricing rule: stall hours = compute hours × stall fraction, one line per cause, billed at the
blended cluster rate (every node is paid for while it waits). The fractions are the time
model's per-step seconds over the step's compute and host seconds (``trainbill.timemodel``
``Layout``): data-parallel gradient sync not hidden by compute, tensor-parallel activation
all-reduces, the pipeline bubble, MoE all-to-all, and stragglers (cv · sqrt(2 ln GPUs)).
Reads ``[time]`` and ``reliability.straggler_cv`` assumptions via the usage, prices via
``prices.csv``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from trainbill.catalog import Catalog
from trainbill.costs._arrays import some
from trainbill.costs._pricing import cluster_rate, cluster_rate_provenance, cluster_rate_source
from trainbill.ledger import Charge
from trainbill.timemodel import TimeEstimate
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "sync_stall"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """One line per stall cause: exposed communication and stragglers."""
    rate, words = cluster_rate(catalog, usage)
    source = cluster_rate_source(catalog, usage)
    t = usage.time
    total = t.sync_stall_fraction
    stalled = usage.compute.sync_stall_hours
    if not some(total > 0):
        # No modelled stall, but the usage has some (a simulated trial's throttling episodes):
        # those hours are billed too, or a slower trial would come out cheaper.
        if some(stalled > 0):
            yield Charge(
                category=CATEGORY,
                item="slow steps (throttling, stragglers)",
                quantity=stalled,
                unit="cluster-hour",
                unit_price_usd=rate,
                basis=lambda: f"{stalled:,.2f} h of slowed steps; {words()}",
                source=source,
                provenance=cluster_rate_provenance(catalog, usage),
                driver=__name__,
            )
        return
    hours = usage.compute.hours
    # A TPU's chips talk over its inter-chip interconnect, not NVLink.
    link = "ICI" if usage.instance.billing == "chip" else "NVLink"
    for label, fraction, why in _causes(t, link):
        if not some(fraction > 0):
            continue

        def basis(f: float = fraction, w: Callable[[], str] = why) -> str:
            return f"{hours:,.2f} h × {f:.2%} ({w()}); {words()}"

        yield Charge(
            category=CATEGORY,
            item=label,
            quantity=stalled * fraction / total,
            unit="cluster-hour",
            unit_price_usd=rate,
            basis=basis,
            source=source,
            provenance=cluster_rate_provenance(catalog, usage),
            driver=__name__,
        )


def _causes(t: TimeEstimate, link: str) -> list[tuple[str, float, Callable[[], str]]]:
    """(line item, fraction of compute time, why) for each stall cause the time model found.

    Each communication fraction is that cause's seconds per step over the step's compute and
    host seconds, so together they are exactly the time model's ``comm_stall_fraction``. The
    why is rendered on demand (a basis), from a single plan only: the planner prices many node
    counts at once, their layouts' seconds then arrays.
    """
    causes: list[tuple[str, float, Callable[[], str]]] = []
    lay = t.layout
    if lay is not None and some(lay.busy_s > 0):

        def per() -> str:
            return f"per step of {lay.busy_s:.2f} s compute"

        causes += [
            (
                "data-parallel gradient sync not hidden by compute",
                lay.dp_exposed_s / lay.busy_s,
                lambda: (
                    f"{lay.dp_sync_s:.2f} s of sync over {lay.dp:g} data-parallel ranks, "
                    f"{lay.dp_exposed_s:.2f} s exposed {per()}"
                ),
            ),
            (
                "tensor-parallel activation all-reduce",
                lay.tp_s / lay.busy_s,
                lambda: f"tensor parallel {lay.tp} over {link}: {lay.tp_s:.2f} s {per()}",
            ),
            (
                "pipeline bubble",
                lay.bubble_s / lay.busy_s,
                lambda: (
                    f"{lay.pp} pipeline stages, interleaved 1F1B: {lay.bubble_s:.2f} s idle {per()}"
                ),
            ),
            (
                "MoE all-to-all token exchange",
                lay.a2a_exposed_s / lay.busy_s,
                lambda: (
                    f"expert dispatch/combine not overlapped: {lay.a2a_exposed_s:.2f} s {per()}"
                ),
            ),
        ]
    causes.append(
        (
            "stragglers (slowest GPU sets the step)",
            t.straggler_fraction,
            lambda: "cv × sqrt(2 ln GPUs)",
        )
    )
    return causes
