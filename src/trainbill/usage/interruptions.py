"""Failures, Spot reclaims and checkpoints over a run: the one home of that arithmetic.

``usage_for`` builds a forecast's usage with ``Interruptions.of``; ``Usage.with_schedule``
re-derives one for another interval or spot share (the planner's grid, the simulation's
studies), elementwise over arrays. The rates per hour are shared with the sampler and the
Young/Daly interval.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from trainbill._record import record
from trainbill.timemodel._elementwise import sqrt

if TYPE_CHECKING:
    from trainbill.usage.records import Checkpoint, Reliability


def failures_per_hour(rate_per_gpu_day: float, gpus: int) -> float:
    """Expected hardware interruptions per wall-clock hour of the whole cluster.

    One rule for the failures line (events = this × exposed hours) and the checkpoint
    interval's cluster MTBF (1 / this): failures are independent per GPU, so the cluster's
    rate is the per-GPU rate times the GPUs (Llama 3 405B: 419 on 16,384 GPUs in 54 days).
    """
    return rate_per_gpu_day * gpus / 24.0


def hours_lost_per_interruption(interval_hours: float, restart_hours: float) -> float:
    """Hours one failure or reclaim costs on average: the work since the last checkpoint, half an
    interval (interruptions are uniform within one), plus the restart."""
    return interval_hours / 2.0 + restart_hours


def reclaims_per_hour(hazard_per_node_hour: float, nodes: int, spot_fraction: float) -> float:
    """Expected spot reclaims per wall-clock hour: the hazard of each spot node, summed
    (elementwise where the spot share is an array, as every ``Usage`` quantity may be)."""
    return hazard_per_node_hour * nodes * spot_fraction


@record
class Interruptions:
    """Checkpoints written and the expected failures and reclaims of a run, with the hours lost.

    Typed as floats like every ``Usage`` quantity; NumPy arrays pass through elementwise
    (``costs.price_arrays``). The one home of this arithmetic (issue #21): ``usage_for`` builds
    a forecast's usage with it, ``Usage.with_schedule`` re-derives a usage for another
    checkpoint interval or spot share (the planner's grid, the simulation's interval study and
    expectations), elementwise when the interval, spot share or hours are arrays. Each failure
    or reclaim loses half an interval of work on average (interruptions are uniform within an
    interval) plus the restart.
    """

    checkpoint_count: float
    checkpoint_stall_hours: float
    failure_events: float
    failure_lost_hours: float
    reclaim_events: float
    reclaim_lost_hours: float

    @classmethod
    def of(
        cls,
        *,
        steady_hours: float,
        compute_hours: float,
        sync_stall_hours: float,
        checkpoints: bool,
        stall_each_hours: float,
        interval_hours: float,
        failures_per_hour: float,
        reclaims_per_hour: float,
        restart_hours: float,
    ) -> Interruptions:
        """Checkpoints every ``interval_hours`` of training; events over the exposed hours."""
        count = compute_hours / interval_hours if checkpoints else 0.0 * interval_hours
        stall = count * stall_each_hours
        exposed = steady_hours + sync_stall_hours + stall
        lost_each = hours_lost_per_interruption(interval_hours, restart_hours)
        fails = failures_per_hour * exposed
        reclaims = reclaims_per_hour * exposed
        return cls(
            checkpoint_count=count,
            checkpoint_stall_hours=stall,
            failure_events=fails,
            failure_lost_hours=fails * lost_each,
            reclaim_events=reclaims,
            reclaim_lost_hours=reclaims * lost_each,
        )

    def checkpoint(self, ck: Checkpoint) -> Checkpoint:
        """``ck`` with these checkpoint count and stall."""
        return replace(ck, count=self.checkpoint_count, stall_hours=self.checkpoint_stall_hours)

    def reliability(self, rel: Reliability) -> Reliability:
        """``rel`` with these failures and reclaims and the hours they lose."""
        return replace(
            rel,
            failure_events=self.failure_events,
            failure_lost_hours=self.failure_lost_hours,
            reclaim_events=self.reclaim_events,
            reclaim_lost_hours=self.reclaim_lost_hours,
        )


def young_daly_interval_hours(stall_hours: float, mtbf_hours: float) -> float:
    """Checkpoint interval that minimises write stalls plus work lost to interruptions.

    Young's first-order optimum sqrt(2 · δ · M) (J. W. Young, "A first order approximation to
    the optimum checkpoint interval", CACM 17(9), 1974), δ the stall of one checkpoint and M the
    mean time between interruptions. It is the same cost model the drivers price: checkpoints
    cost (T / τ) · δ, interruptions cost T / M · τ / 2 each; the derivative vanishes at
    τ = sqrt(2 δ M). Daly's higher-order form (FGCS 22(3), 2006) is shorter by about
    (2/3)·sqrt(δ / 2M) relative: under 1 % while δ / M < 2e-4 (16,384 H100s writing 5.6 TB at the
    default 2 GB/s per node: δ / M = 1.4 s / 3.1 h = 1.2e-4).
    """
    return sqrt(2.0 * stall_hours * mtbf_hours)
