"""Checkpoint writes, their interval, the reliability rates that set it, and evaluation.

The interval (Young/Daly) needs the write stall (size over the write rate of the target: S3,
FSx, EBS, behind the NAT cap where one applies) and the cluster's interruption rates (failures
per GPU, the Spot reclaim hazard); evaluation's share of time needs the time model's step. They
are worked out together here because each reads the previous one's result.
"""

from __future__ import annotations

import math
from datetime import date
from typing import TYPE_CHECKING

from trainbill._record import record
from trainbill.catalog import Catalog, Instance
from trainbill.errors import SpecError
from trainbill.spec import Plan
from trainbill.timemodel import TimeEstimate
from trainbill.timemodel._elementwise import first, least, most, uniform
from trainbill.usage.interruptions import (
    failures_per_hour,
    reclaims_per_hour,
    young_daly_interval_hours,
)
from trainbill.usage.records import Checkpoint, Evaluation, Reliability
from trainbill.usage.storage import _MIB, fsx_throughput_mbps, lustre_gb_per_gib, lustre_size_gib

if TYPE_CHECKING:
    from trainbill.usage._defaults import _Defaults
    from trainbill.usage.job import Job


@record
class _Target:
    """Where a checkpoint is written, with what bounds its write rate there."""

    target: str
    #: The Lustre file system's size (GiB, as created) and the GB its price applies to.
    fsx_gib: float
    fsx_gb: float
    fsx_tier: str
    ebs_mibps: float


@record
class _Writes:
    """How a checkpoint is written: its size, where, and how long one stalls training."""

    size_gb: float
    to: _Target
    asynchronous: bool
    stall_each: float
    #: The hosts that write their shards in parallel (``Usage.hosts``).
    hosts: int = 1


def _checkpoint_writes(plan: Plan, d: _Defaults, nodes: int, provider: str) -> _Writes:
    """Size from parameters (or given), write stall from aggregate bandwidth (``nodes``: the
    hosts writing in parallel)."""
    ck, m, st = plan.checkpoint, plan.model, plan.storage
    target = str(d.get(ck.target, "defaults.checkpoint.target"))
    asynchronous = bool(d.get(ck.asynchronous, "defaults.checkpoint.asynchronous"))
    if ck.size_gb is not None:
        size_gb = ck.size_gb
    elif m.params is not None:
        size_gb = (
            m.params * float(d.get(ck.bytes_per_param, "defaults.checkpoint.bytes_per_param")) / 1e9
        )
    else:
        size_gb = 0.0
    fsx_tier = str(d.get(st.fsx_tier, "defaults.storage.fsx_tier"))
    asked = float(d.get(st.fsx_capacity_gb, "defaults.storage.fsx_capacity_gb"))
    fsx_gib = lustre_size_gib(d.catalog, provider, fsx_tier, asked)
    if target == "fsx" and fsx_gib <= 0:
        msg = "checkpoint target is fsx but storage.fsx_capacity_gb is 0; give the FSx capacity"
        raise SpecError(msg, field="checkpoint.target")
    ebs_mibps = (
        float(d.get(st.ebs_throughput_mibps, "defaults.storage.ebs_throughput_mibps"))
        if target == "ebs"
        else 0.0
    )
    to = _Target(
        target=target,
        fsx_gib=fsx_gib,
        fsx_gb=fsx_gib * lustre_gb_per_gib(d.catalog, provider),
        fsx_tier=fsx_tier,
        ebs_mibps=ebs_mibps,
    )
    if asynchronous:
        rate = float(d.get(None, "defaults.checkpoint.snapshot_gbytes_per_s_per_node")) * nodes
    else:
        rate = least(
            _write_rate(d, ck.write_gbytes_per_s_per_node, nodes, to),
            _nat_cap_gbytes_per_s(plan, d, provider, target),
        )
    return _Writes(
        size_gb=size_gb,
        to=to,
        asynchronous=asynchronous,
        stall_each=size_gb / rate / 3600.0 if size_gb > 0 else 0.0,
        hosts=nodes,
    )


def _reliability_rates(plan: Plan, catalog: Catalog, d: _Defaults, job: Job) -> Reliability:
    """Restart time and interruption rates; the events over the run come later
    (``Interruptions``: they need the exposed hours), zero until then."""
    rel = plan.reliability
    restart = float(d.get(rel.restart_hours, f"reliability.restart_hours_{job.orchestrator}"))
    fail_rate = float(
        d.get(rel.gpu_failure_rate_per_gpu_day, "reliability.gpu_failure_rate_per_gpu_day")
    )
    hazard = _spot_hazard(plan, catalog, d, job.instance, job.provider, job.region, job.as_of)
    return Reliability(
        failure_rate_per_gpu_day=fail_rate,
        spot_reclaim_rate_per_node_hour=hazard,
        restart_hours=restart,
        failure_events=0.0,
        failure_lost_hours=0.0,
        reclaim_events=0.0,
        reclaim_lost_hours=0.0,
    )


def _checkpoint_schedule(
    plan: Plan, d: _Defaults, est: TimeEstimate, writes: _Writes, rel: Reliability, job: Job
) -> tuple[float, float | None, str]:
    """The interval (and Young's optimum, and why): the plan's, else the Young/Daly optimum for
    this cluster (both kinds of interruption lose work back to the last checkpoint), no shorter
    than a step or than persisting an asynchronous snapshot, no longer than the catalog's
    longest default."""
    ck = plan.checkpoint
    per_hour = failures_per_hour(rel.failure_rate_per_gpu_day, job.gpus) + reclaims_per_hour(
        rel.spot_reclaim_rate_per_node_hour, job.nodes, plan.purchase.spot_fraction
    )
    floor = est.layout.step_s / 3600.0 if est.layout is not None else 0.0
    if (
        writes.asynchronous
        and writes.size_gb > 0
        and ck.interval_hours is None
        and uniform(per_hour > 0)
    ):
        given = ck.write_gbytes_per_s_per_node
        rate = _write_rate(d, given, writes.hosts, writes.to)
        floor = most(floor, writes.size_gb / rate / 3600.0)
    return _checkpoint_interval(d, ck.interval_hours, writes.stall_each, per_hour, floor)


def _evaluation(plan: Plan, d: _Defaults, est: TimeEstimate, compute_hours: float) -> Evaluation:
    """Evaluation steps every so many training steps, each a fraction of a training step."""
    ev = plan.evaluation
    interval = int(d.get(ev.interval_steps, "defaults.evaluation.interval_steps"))
    steps = int(d.get(ev.steps, "defaults.evaluation.steps")) if interval else 0
    fraction = _eval_step_fraction(est)
    return Evaluation(
        hours=compute_hours * steps / interval * fraction if interval else 0.0,
        interval_steps=interval,
        steps=steps,
        step_fraction=fraction,
    )


def _checkpoint(
    plan: Plan, d: _Defaults, writes: _Writes, schedule: tuple[float, float | None, str]
) -> Checkpoint:
    """The checkpoint record; count and stall are zero until ``Interruptions`` sets them."""
    ck = plan.checkpoint
    interval, optimum, basis = schedule
    return Checkpoint(
        size_gb=writes.size_gb,
        target=writes.to.target,
        asynchronous=writes.asynchronous,
        keep_last=int(d.get(ck.keep_last, "defaults.checkpoint.keep_last")),
        # Kept after the run only where the bill prices it (S3): elsewhere the assumption is
        # not used, so it is not listed among the forecast's assumptions either.
        retention_days=(
            float(d.get(ck.retention_days, "defaults.checkpoint.retention_days"))
            if writes.to.target == "s3"
            else float(ck.retention_days or 0.0)
        ),
        interval_hours=interval,
        interval_optimum_hours=optimum,
        interval_basis=basis,
        stall_hours_each=writes.stall_each,
        count=0.0,
        stall_hours=0.0,
    )


def _nat_cap_gbytes_per_s(plan: Plan, d: _Defaults, provider: str, target: str) -> float:
    """GB/s a checkpoint written to S3 through NAT can move: every byte crosses the NAT
    gateways (no S3 gateway endpoint), each carrying at most ``defaults.network.nat_gateway_gbps``
    (100 Gbps = 12.5 GB/s), so the write stall is priced at that rate however many nodes write.
    Infinite when the checkpoint does not cross a gateway."""
    net = plan.network
    via_nat = bool(d.get(net.s3_via_nat, "defaults.network.s3_via_nat"))
    gateways = int(d.get(net.nat_gateways, "defaults.network.nat_gateways"))
    if provider != "aws" or target != "s3" or not via_nat or gateways <= 0:
        return math.inf
    return gateways * float(d.get(None, "defaults.network.nat_gateway_gbps")) / 8.0


def _write_rate(d: _Defaults, given: float | None, nodes: int, to: _Target) -> float:
    """GB/s the cluster writes a checkpoint to storage: per-node rate × nodes, capped by what the
    target can take. FSx: the file system's throughput (capacity × the tier's MB/s per TiB).
    EBS: each node writes its own shard to its own gp3 volume, which moves no more than the
    volume's provisioned throughput (MiB/s; a synchronous write to a 125 MiB/s baseline volume
    is 15× slower than the 2 GB/s per node of an S3 multipart upload)."""
    rate = float(d.get(given, "defaults.checkpoint.write_gbytes_per_s_per_node")) * nodes
    if to.target == "fsx":
        rate = least(rate, fsx_throughput_mbps(d.catalog, to.fsx_gib, to.fsx_tier) / 1000.0)
    elif to.target == "ebs":
        rate = least(rate, to.ebs_mibps * _MIB / 1e9 * nodes)
    return rate


def _checkpoint_interval(
    d: _Defaults, given: float | None, stall_hours: float, per_hour: float, floor_hours: float
) -> tuple[float, float | None, str]:
    """The checkpoint interval, Young's optimum (``None`` when undefined) and why.

    The optimum is bounded: no shorter than ``floor_hours`` (one training step; persisting an
    asynchronous snapshot before the next) and no longer than the catalog's
    ``defaults.checkpoint.interval_hours``, because checkpoints also serve rollbacks after loss
    spikes, which the failure rate does not count. Without checkpoint writes or interruptions
    the optimum is undefined and the catalog's interval is used.
    """
    cap = d.catalog.assumption("defaults.checkpoint.interval_hours")
    optimum: float | None = None
    words = ""
    if uniform(stall_hours > 0) and uniform(per_hour > 0):
        mtbf = 1.0 / per_hour
        young = young_daly_interval_hours(stall_hours, mtbf)
        optimum = least(most(young, floor_hours), float(cap.value))
        # (in words the first node count's figures: a sweep's text is its first's)
        young, floor_hours, mtbf = first(young), first(floor_hours), first(mtbf)
        words = (
            f"Young/Daly optimum sqrt(2 × {first(stall_hours) * 3600:,.3g} s write stall × "
            f"{mtbf:,.3g} h cluster MTBF) = {young:.3g} h"
        )
        if young < floor_hours:
            words += (
                f", raised to {floor_hours:.3g} h (one step, or persisting the previous snapshot)"
            )
        elif young > float(cap.value):
            words += f", capped at {cap.key} = {cap.value} h"
    if given is not None:
        basis = f"{given:g} h stated in the plan" + (
            f"; {words} → {first(optimum):.3g} h" if optimum is not None else ""
        )
        return given, optimum, basis
    if optimum is None:
        interval = float(d.get(None, cap.key))
        return (
            interval,
            None,
            f"{interval:g} h ({cap.key}: no checkpoint writes or no interruptions to balance)",
        )
    d.used.append(
        f"checkpoint.interval_hours = {first(optimum):.3g} h: {words} (Young, CACM 17(9) 1974; "
        "Daly, FGCS 22(3) 2006; MTBF from reliability.gpu_failure_rate_per_gpu_day and spot "
        "reclaims, write stall from the checkpoint rule)"
    )
    if first(optimum) == float(cap.value):
        d.used.append(cap.cite())
    return optimum, optimum, f"{first(optimum):.3g} h: {words}"


#: A forward pass is 2 of the 6 FLOPs per parameter per token of a training step (Kaplan et al.
#: 2020, arXiv 2001.08361: forward 2N, backward 4N); attention FLOPs split the same way.
_FORWARD_SHARE = 1.0 / 3.0


def _eval_step_fraction(est: TimeEstimate) -> float:
    """Hours of one evaluation step per hour of one training step.

    An evaluation step is a forward pass over a training-sized batch: a third of the step's
    FLOPs, with no activation recompute (nothing to recompute without a backward pass), no
    gradient sync and no optimizer step, so it is a third of the kernel time *before* recompute
    and none of the fixed per-step host overhead. Without a layout (hours given, no model) a
    step is all kernel time and the fraction is the plain third.
    """
    lay = est.layout
    if lay is None or uniform(lay.busy_s <= 0):
        return _FORWARD_SHARE
    return lay.compute_s / lay.recompute_factor * _FORWARD_SHARE / lay.busy_s


def _spot_hazard(
    plan: Plan,
    catalog: Catalog,
    d: _Defaults,
    inst: Instance,
    provider: str,
    region: str,
    as_of: date,
) -> float:
    """Per-node-hour reclaim hazard: plan value, else Spot Advisor bucket, else the default.

    The Advisor bucket is a monthly fraction of instances reclaimed; the hazard is
    −ln(1 − p) / 730 per instance-hour (REFERENCE §5.1 modelling note).
    """
    given = plan.reliability.spot_reclaim_rate_per_node_hour
    if given is not None:
        return given
    if plan.purchase.spot_fraction == 0:
        return 0.0
    hours = float(catalog.value("reliability.hours_per_month"))
    row = catalog.spot_row(inst.instance, provider=provider, region=region, as_of=as_of)
    if row is not None:
        buckets = catalog.value("reliability.spot_bucket_monthly_rate")
        p = float(buckets[row.interruption_bucket])
        d.used.append(
            f"spot reclaim: Spot Advisor {row.interruption_bucket} for {inst.instance} in {region} "
            f"(observed {row.observed}; {row.source}) -> {p:.1%}/month"
        )
        d.used.append(catalog.assumption("reliability.spot_bucket_monthly_rate").cite())
    else:
        p = float(d.get(None, "reliability.spot_default_monthly_rate"))
    return -math.log(1.0 - p) / hours
