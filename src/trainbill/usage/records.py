"""The ``Usage`` record and its nine aspect records: what a plan consumes, in physical units.

A flat context plus one frozen record per aspect (compute, checkpoint, evaluation,
reliability, storage, data, network, monitoring, purchase). Every quantity may be a NumPy
array (a simulation's trials, a planner's grid), so the drivers price one plan and many with
the same arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.catalog import Accelerator, Instance
from trainbill.timemodel import TimeEstimate
from trainbill.usage.interruptions import (
    Interruptions,
    failures_per_hour,
    hours_lost_per_interruption,
    reclaims_per_hour,
)


def hosts_of(nodes: int, chips_per_host: int) -> int:
    """VM hosts of ``nodes`` chips at ``chips_per_host`` a host, rounded up: integer ceiling
    division, so it is exact for a count and elementwise for a node sweep's array of them."""
    hosts: int = -(-nodes // max(chips_per_host, 1))
    return hosts


@record
class Compute:
    """The model and its pure training time: what the time model said, before any stall."""

    params: float | None
    active_params: float | None
    tokens: float | None
    #: FLOPs actually performed (a sparse-attention what-if skips some); None without a model.
    flops: float | None
    #: Wall-clock hours of pure training (the time model's, times ``usage_for``'s time scale).
    hours: float
    #: Hours the cluster waits on communication, the pipeline and the slowest GPU.
    sync_stall_hours: float


@record
class Checkpoint:
    """What is written, where, how often, and the training it stalls."""

    size_gb: float
    target: str
    asynchronous: bool
    keep_last: int
    retention_days: float
    interval_hours: float
    #: Young's optimum interval for this cluster's interruption rate and checkpoint stall
    #: (``young_daly_interval_hours``); ``None`` without checkpoints or interruptions. The
    #: interval used is this one unless the plan stated one.
    interval_optimum_hours: float | None
    #: How the interval used was chosen, with the arithmetic (``--explain``).
    interval_basis: str
    stall_hours_each: float
    #: Checkpoints written over the run: training hours / interval (``Interruptions``).
    count: float
    #: Hours training stalls writing them: count × stall of one.
    stall_hours: float

    @property
    def write_gb(self) -> float:
        """GB of checkpoints written over the run."""
        return self.count * self.size_gb


@record
class Evaluation:
    """Forward-only validation passes run during training."""

    hours: float
    interval_steps: int
    steps: int
    #: Hours of one evaluation step per hour of one training step.
    step_fraction: float


@record
class Reliability:
    """Interruption rates and, over the run, the failures and reclaims with the hours they lose.

    ``*_lost_hours`` are totals over the run: expected values in a forecast, sampled values in a
    simulation trial.
    """

    failure_rate_per_gpu_day: float
    spot_reclaim_rate_per_node_hour: float
    restart_hours: float
    failure_events: float
    failure_lost_hours: float
    reclaim_events: float
    reclaim_lost_hours: float


@record
class Storage:
    """Block storage per node and the shared file system."""

    ebs_gb_per_node: float
    ebs_iops: float
    ebs_throughput_mibps: float
    fsx_capacity_gb: float
    fsx_tier: str


@record
class Data:
    """The training data: how much, how often read, and where it lives.

    ``source`` is a ``spec.DataSource``; for s3/fsx/ebs ``location`` says where relative to the
    cluster (``same_az``/``cross_az``/``cross_region``); ``provider``/``region``: the cloud and
    region holding it (the cluster's own for s3/fsx/ebs in its region; empty for on-premises
    data); ``zone``: the zone of fsx/ebs data when the plan names it.
    """

    dataset_gb: float
    source: str
    location: str
    provider: str
    region: str
    zone: str | None
    epochs: float
    object_mb: float

    @property
    def read_gb(self) -> float:
        """GB the data loaders read over the run: the dataset once per epoch."""
        return self.dataset_gb * self.epochs


@record
class Network:
    """NAT gateways, the traffic through them, and public IPs."""

    nat_gateways: int
    nat_gb_per_node_hour: float
    s3_via_nat: bool
    public_ips_per_node: float


@record
class Monitoring:
    """Custom metrics and logs shipped per node."""

    custom_metrics_per_node: float
    logs_gb_per_node_hour: float


@record
class Purchase:
    """How the nodes are bought: spot share, commitment term, coverage and kind."""

    spot_fraction: float
    savings_plan: str
    savings_plan_coverage: float
    #: "compute", "ec2-instance" or "sagemaker" on AWS; "" elsewhere (or with no plan).
    savings_plan_kind: str = ""
    #: "existing" (commitment rate, cost sunk/shared) or "buy" (whole term charged).
    commitment: str = "buy"
    #: The instance's spot price as a multiple of the catalog's (``costs._pricing.instance_rate``):
    #: 1 for a forecast; a simulated trial's sampled spot price (``trainbill.simulate``).
    spot_price_scale: float = 1.0


@record
class Usage:
    """Everything a plan consumes, in physical units. Drivers price it; nothing here is money.

    A flat context (who, where, when, how many nodes) and one frozen record per aspect of the
    run: ``compute``, ``checkpoint``, ``evaluation``, ``reliability``, ``storage``, ``data``,
    ``network``, ``monitoring``, ``purchase``. Time fields are wall-clock hours of the whole
    cluster. Every quantity is typed ``float`` and may be a NumPy array (a simulation's trials,
    a planner's grid): the arithmetic here and in the drivers broadcasts. ``with_values``
    replaces fields by dotted name (``"checkpoint.count"``), as ``simulate.PERTURBED`` names them.
    """

    # Context resolved from the plan and catalog.
    name: str
    provider: str
    region: str
    instance: Instance
    accelerator: Accelerator
    nodes: int
    orchestrator: str
    #: The cluster's zone as the plan gave it (None: not given), and its account-independent ID
    #: where one is known (an AWS AZ name such as us-east-1a maps to an ID per account: None).
    zone: str | None
    zone_id: str | None
    precision: str
    as_of: date
    #: The run's software date (``run.date``, else ``as_of``): the time model's maturity input.
    run_date: date
    # The run, aspect by aspect.
    compute: Compute
    checkpoint: Checkpoint
    evaluation: Evaluation
    reliability: Reliability
    storage: Storage
    data: Data
    network: Network
    monitoring: Monitoring
    purchase: Purchase
    # Provenance.
    time: TimeEstimate
    #: Further instance groups (e.g. a CPU head node): (name, instance, count, spot).
    extra_groups: tuple[tuple[str, str, int, bool], ...] = ()
    assumed: tuple[str, ...] = field(default=())
    hours_per_month: float = 730.0
    #: Accelerator chips per VM host where the instance is billed per chip (TPUs: ``nodes`` are
    #: chips); 1 elsewhere (a node is a host).
    chips_per_host: int = 1
    #: What the user should know about how the plan was read (e.g. GPUs rounded up to nodes).
    warnings: tuple[str, ...] = ()
    #: Notes of the what-ifs applied to the plan (``Plan.whatif``): what the forecast did not
    #: derive from the plan as written.
    whatif_notes: tuple[str, ...] = ()

    @property
    def gpus(self) -> int:
        """Accelerators in the cluster."""
        return self.nodes * self.instance.accelerator_count

    @property
    def hosts(self) -> int:
        """VM hosts: what a boot disk, a network interface, metrics and logs are counted per.
        A node elsewhere; for a per-chip instance (TPU), where ``nodes`` counts chips, the
        chips over ``chips_per_host`` (a v5p slice of 256 chips runs on 64 VMs: pricing its
        disks and NAT traffic per chip made those lines 4x too large)."""
        if self.instance.billing != "chip":
            return self.nodes
        return hosts_of(self.nodes, self.chips_per_host)

    @property
    def host_word(self) -> str:
        """What a per-host line counts, in a basis: "nodes", or "TPU hosts" for chips."""
        return "nodes" if self.instance.billing != "chip" else "TPU hosts"

    @property
    def steady_hours(self) -> float:
        """Training plus evaluation: the hours the sampled stalls and interruptions add to."""
        return self.compute.hours + self.evaluation.hours

    @property
    def exposed_hours(self) -> float:
        """Hours the cluster trains, evaluates or writes checkpoints (failures can strike)."""
        return self.steady_hours + self.compute.sync_stall_hours + self.checkpoint.stall_hours

    @property
    def wall_hours(self) -> float:
        """Whole-run wall-clock: exposed hours plus everything lost to failures and reclaims."""
        r = self.reliability
        return self.exposed_hours + r.failure_lost_hours + r.reclaim_lost_hours

    @property
    def gpu_hours(self) -> float:
        """Whole-run GPU-hours (``wall_hours`` × ``gpus``): what every GPU-hour figure shown in
        the CLI, report, JSON and error band reads, so the product is written once."""
        return self.wall_hours * self.gpus

    @property
    def lost_hours_each(self) -> float:
        """Hours one failure or reclaim costs on average (``hours_lost_per_interruption``)."""
        return hours_lost_per_interruption(
            self.checkpoint.interval_hours, self.reliability.restart_hours
        )

    @property
    def node_hours(self) -> float:
        """Instance-hours billed for the whole run."""
        return self.nodes * self.wall_hours

    @property
    def months(self) -> float:
        """Run length in billing months (730 h), for GB-month and metric-month prices."""
        return self.wall_hours / self.hours_per_month

    @property
    def mfu(self) -> float | None:
        """Model FLOPs / (GPUs · peak · (compute + sync) time); None without model size."""
        c = self.compute
        if c.flops is None:
            return None
        seconds = (c.hours + c.sync_stall_hours) * 3600.0
        return c.flops / (self.gpus * self.time.peak_tflops_per_gpu * 1e12 * seconds)

    def value(self, name: str) -> Any:
        """A field by dotted name (``"checkpoint.count"``) or context name (``"nodes"``)."""
        out: Any = self
        for part in name.split("."):
            out = getattr(out, part)
        return out

    def with_values(self, values: Mapping[str, Any]) -> Usage:
        """The usage with fields replaced by dotted name (``{"checkpoint.count": n}``): the
        simulation's sampled quantities and the planner's grid axes, each record replaced once."""
        top: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for name, v in values.items():
            record, _, leaf = name.partition(".")
            if leaf:
                nested.setdefault(record, {})[leaf] = v
            else:
                top[record] = v
        for record, leaves in nested.items():
            top[record] = replace(getattr(self, record), **leaves)
        return replace(self, **top)

    def with_schedule(
        self,
        *,
        interval_hours: float | None = None,
        spot_fraction: float | None = None,
        failure_rate_per_gpu_day: float | None = None,
        spot_reclaim_rate_per_node_hour: float | None = None,
        restart_hours: float | None = None,
    ) -> Usage:
        """The same run with another checkpoint interval, spot share or interruption rates:
        checkpoint count and stall and the expected failures and reclaims re-derived
        (``Interruptions``, as ``usage_for`` derives them), elementwise for arrays. The spot
        share changes how many nodes can be reclaimed, not the price of the others (the
        drivers read it from this usage)."""
        ck, rel = self.checkpoint, self.reliability
        interval = ck.interval_hours if interval_hours is None else interval_hours
        s = self.purchase.spot_fraction if spot_fraction is None else spot_fraction
        fail_rate = (
            rel.failure_rate_per_gpu_day
            if failure_rate_per_gpu_day is None
            else failure_rate_per_gpu_day
        )
        hazard = (
            rel.spot_reclaim_rate_per_node_hour
            if spot_reclaim_rate_per_node_hour is None
            else spot_reclaim_rate_per_node_hour
        )
        restart = rel.restart_hours if restart_hours is None else restart_hours
        events = Interruptions.of(
            steady_hours=self.steady_hours,
            compute_hours=self.compute.hours,
            sync_stall_hours=self.compute.sync_stall_hours,
            checkpoints=ck.size_gb > 0,
            stall_each_hours=ck.stall_hours_each,
            interval_hours=interval,
            failures_per_hour=failures_per_hour(fail_rate, self.gpus),
            reclaims_per_hour=reclaims_per_hour(hazard, self.nodes, s),
            restart_hours=restart,
        )
        return replace(
            self,
            checkpoint=events.checkpoint(replace(ck, interval_hours=interval)),
            reliability=events.reliability(
                replace(
                    rel,
                    failure_rate_per_gpu_day=fail_rate,
                    spot_reclaim_rate_per_node_hour=hazard,
                    restart_hours=restart,
                )
            ),
            purchase=replace(self.purchase, spot_fraction=s),
        )

    def without_disruptions(self) -> Usage:
        """The same run with no failures, reclaims, stalls or stragglers: the quote's world."""
        return self.with_values(
            {
                "compute.sync_stall_hours": 0.0,
                "checkpoint.stall_hours": 0.0,
                "reliability.failure_events": 0.0,
                "reliability.failure_lost_hours": 0.0,
                "reliability.reclaim_events": 0.0,
                "reliability.reclaim_lost_hours": 0.0,
            }
        )
