"""``usage_for``: one named step per record of the ``Usage``, in the order their citations
are due.

The steps themselves live beside the rule they apply (``compute``, ``checkpoints``,
``storage``, ``placement``); this module only runs them in order and assembles the result, plus
the three small records (network, monitoring, purchase) that are a plan value or a default.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from trainbill.catalog import Catalog
from trainbill.spec import Plan
from trainbill.timemodel import TimeEstimate
from trainbill.timemodel._elementwise import first
from trainbill.usage._defaults import _Defaults
from trainbill.usage.checkpoints import (
    _checkpoint,
    _checkpoint_schedule,
    _checkpoint_writes,
    _evaluation,
    _reliability_rates,
)
from trainbill.usage.cluster import hyperpod_spot_note
from trainbill.usage.compute import _chips_per_host, _compute
from trainbill.usage.interruptions import Interruptions, failures_per_hour, reclaims_per_hour
from trainbill.usage.job import resolve_job
from trainbill.usage.placement import _data, _dataset_gb
from trainbill.usage.plan_warnings import _checkpoint_fit_warnings
from trainbill.usage.records import Compute, Monitoring, Network, Purchase, Usage, hosts_of
from trainbill.usage.storage import _storage

if TYPE_CHECKING:
    from trainbill.usage.job import Job


def usage_for(
    plan: Plan,
    catalog: Catalog,
    *,
    today: date | None = None,
    measured_mfu: float | None = None,
    time_scale: float = 1.0,
    job: Job | None = None,
) -> Usage:
    """Work out everything the plan consumes, filling gaps from catalog assumptions.

    ``time_scale`` multiplies the time model's training hours: the forecast's P10/P90 band
    re-runs the plan at the cross-validated error multipliers (``time.error_band``), so every
    hour-driven line (stalls, failures, storage-months) moves with the time, as it would.

    ``measured_mfu`` (a profile calibration that matches the plan's accelerator and
    precision) replaces the time model's kernel efficiency. ``job``: the plan already resolved
    (``resolve_job``), by a caller that prices many plans sharing one context (the planner).

    One named step per record; the steps run in this order because each cites the catalog
    assumptions it falls back on (``assumed``, in order of use) and some need an earlier one's
    result (the interval needs the write stall and the interruption rates).
    """
    job = job if job is not None else resolve_job(plan, catalog, today=today)
    plan = _spot_as_bought(plan, catalog, job)
    d = _Defaults(catalog)
    d.used.extend(job.assumed)
    est, compute = _compute(plan, catalog, d, job, measured_mfu, time_scale)
    return _assemble(plan, catalog, d, job, est, compute)


def _assemble(
    plan: Plan, catalog: Catalog, d: _Defaults, job: Job, est: TimeEstimate, compute: Compute
) -> Usage:
    """Every record after the time model's, in order, and the usage they make.

    Elementwise where ``job.nodes`` and the time model's numbers are arrays over a node sweep
    (``usage_over_nodes``): the rendered text (warnings, citations) is the first node count's.
    """
    chips = _chips_per_host(catalog, d, job)
    hosts = hosts_of(job.nodes, chips)
    writes = _checkpoint_writes(plan, d, hosts, job.provider)
    rel = _reliability_rates(plan, catalog, d, job)
    schedule = _checkpoint_schedule(plan, d, est, writes, rel, job)
    evaluation = _evaluation(plan, d, est, compute.hours)
    events = Interruptions.of(
        steady_hours=compute.hours + evaluation.hours,
        compute_hours=compute.hours,
        sync_stall_hours=compute.sync_stall_hours,
        checkpoints=writes.size_gb > 0,
        stall_each_hours=writes.stall_each,
        interval_hours=schedule[0],
        failures_per_hour=failures_per_hour(rel.failure_rate_per_gpu_day, job.gpus),
        reclaims_per_hour=reclaims_per_hour(
            rel.spot_reclaim_rate_per_node_hour, job.nodes, plan.purchase.spot_fraction
        ),
        restart_hours=rel.restart_hours,
    )
    dataset_gb = _dataset_gb(plan, catalog, d)
    storage = _storage(plan, d, writes, job.provider, job.run_date)
    checkpoint = events.checkpoint(_checkpoint(plan, d, writes, schedule))
    data = _data(plan, d, job, dataset_gb)
    fit_warnings = _checkpoint_fit_warnings(checkpoint, storage, data, first(hosts))
    return Usage(
        name=plan.run.name,
        provider=job.provider,
        region=job.region,
        instance=job.instance,
        accelerator=job.accelerator,
        nodes=job.nodes,
        orchestrator=job.orchestrator,
        zone=plan.cluster.zone,
        zone_id=job.zone_id,
        warnings=(*job.warnings, *fit_warnings),
        whatif_notes=job.whatif_notes,
        precision=plan.model.precision,
        as_of=job.as_of,
        run_date=job.run_date,
        compute=compute,
        checkpoint=checkpoint,
        evaluation=evaluation,
        reliability=events.reliability(rel),
        storage=storage,
        data=data,
        network=_network(plan, d),
        monitoring=_monitoring(plan, d),
        purchase=_purchase(plan, job),
        time=est,
        extra_groups=tuple(
            (g.name, g.instance, g.count, g.spot) for g in plan.cluster.extra_groups
        ),
        assumed=tuple(dict.fromkeys(d.used)),
        hours_per_month=float(catalog.value("reliability.hours_per_month")),
        chips_per_host=chips,
    )


def _spot_as_bought(plan: Plan, catalog: Catalog, job: Job) -> Plan:
    """The plan with the Spot share it could buy: none on HyperPod before HyperPod offered Spot
    (``hyperpod_spot_note``, which ``resolve_job`` warns with), so every quantity that reads
    the share (reclaims, the checkpoint interval, the purchase) sees the same cluster."""
    p = plan.purchase
    if not hyperpod_spot_note(catalog, job.orchestrator, p.spot_fraction, job.run_date):
        return plan
    return plan.model_copy(update={"purchase": p.model_copy(update={"spot_fraction": 0.0})})


def _network(plan: Plan, d: _Defaults) -> Network:
    """NAT gateways and their traffic, public IPs: the plan's, else the catalog's defaults."""
    net = plan.network
    return Network(
        nat_gateways=int(d.get(net.nat_gateways, "defaults.network.nat_gateways")),
        nat_gb_per_node_hour=float(
            d.get(net.nat_gb_per_node_hour, "defaults.network.nat_gb_per_node_hour")
        ),
        s3_via_nat=bool(d.get(net.s3_via_nat, "defaults.network.s3_via_nat")),
        public_ips_per_node=float(
            d.get(net.public_ips_per_node, "defaults.network.public_ips_per_node")
        ),
    )


def _monitoring(plan: Plan, d: _Defaults) -> Monitoring:
    """Metrics and logs per node: the plan's, else the catalog's defaults."""
    mon = plan.monitoring
    return Monitoring(
        custom_metrics_per_node=float(
            d.get(mon.custom_metrics_per_node, "defaults.monitoring.custom_metrics_per_node")
        ),
        logs_gb_per_node_hour=float(
            d.get(mon.logs_gb_per_node_hour, "defaults.monitoring.logs_gb_per_node_hour")
        ),
    )


def _purchase(plan: Plan, job: Job) -> Purchase:
    """Spot share and commitment; coverage defaults to all of it when a term is bought."""
    p = plan.purchase
    coverage = p.savings_plan_coverage
    if coverage is None:
        coverage = 0.0 if p.savings_plan == "none" else 1.0
    return Purchase(
        spot_fraction=p.spot_fraction,
        savings_plan=p.savings_plan,
        savings_plan_coverage=coverage,
        savings_plan_kind=job.savings_plan_kind,
        commitment=p.commitment or "buy",
    )
