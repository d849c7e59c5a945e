"""Usage: how much a plan consumes (node-hours, GB-months, GB moved, restarts), not what it costs.

Splitting usage from price is what lets the Monte Carlo (``trainbill.simulate``) perturb only
the quantities (how many failures, how many hours lost) and price every trial with the very
same cost drivers as the deterministic forecast. ``usage_for`` resolves every value a plan left
out from the catalog's assumptions and records the citation in ``assumed`` so the output can
say what was assumed and on whose authority. ``usage_for`` is one named step per record of the
``Usage`` (compute, checkpoint, evaluation, reliability, storage, data, network, monitoring,
purchase), after ``resolve_job`` has settled the context.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from datetime import date, timedelta
from typing import Any, TypeVar

from trainbill._record import record
from trainbill.catalog import PROVIDERS, Accelerator, Catalog, Instance, PricePoint
from trainbill.errors import PriceNotFoundError, SpecError, suggest
from trainbill.spec import ORCHESTRATORS, Plan, WhatIf, orchestrator_on
from trainbill.timemodel import TimeEstimate, default_global_batch, estimate_time

__all__ = [
    "FSX_TIER_MBPS_PER_TIB",
    "Checkpoint",
    "Compute",
    "Data",
    "Evaluation",
    "Interruptions",
    "Job",
    "Monitoring",
    "Network",
    "Purchase",
    "Reliability",
    "Storage",
    "Usage",
    "beyond_price_data",
    "check_region",
    "failures_per_hour",
    "fsx_throughput_mbps",
    "gp3_limits",
    "hours_lost_per_interruption",
    "hyperpod_spot_from",
    "hyperpod_spot_note",
    "hyperpod_unpriced",
    "instance_family",
    "lustre_gb_per_gib",
    "lustre_size_gib",
    "nearest_slice",
    "reclaims_per_hour",
    "resolve_cluster",
    "resolve_job",
    "resolve_zone",
    "sagemaker_price",
    "software_age_years",
    "tpu_slice_sizes",
    "usage_for",
    "young_daly_interval_hours",
]

#: FSx for Lustre throughput per TiB of storage, by deployment tier: the tier's name *is* its
#: throughput (AWS FSx for Lustre performance documentation; scratch_2 is 200 MB/s/TiB).
FSX_TIER_MBPS_PER_TIB = {
    "scratch_2": 200.0,
    "persistent_125": 125.0,
    "persistent_250": 250.0,
    "persistent_500": 500.0,
    "persistent_1000": 1000.0,
}
_MIB = 1048576.0
_DAYS_PER_YEAR = 365.25  # Julian year: ages in years from day counts
#: A run dated this many days after its price date is priced at stale prices: warn.
_RUN_AFTER_PRICES_DAYS = 365


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
        return math.ceil(self.nodes / max(self.chips_per_host, 1))

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


class _Defaults:
    """Reads plan values, falling back to catalog assumptions and recording which were used."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.used: list[str] = []

    def get(self, given: Any, key: str) -> Any:
        if given is not None:
            return given
        a = self.catalog.assumption(key)
        self.used.append(a.cite())
        return a.value


def instance_for_gpu(catalog: Catalog, accelerator: str, provider: str) -> Instance:
    """The instance a plan naming only a GPU runs on: the provider's largest instance holding it
    (training wants whole nodes), else any cloud's; one that can be rented on demand first
    (p5e/H200 has no On-Demand SKU).

    Raises:
        PriceNotFoundError: no instance in the catalog holds the accelerator.
    """
    options = catalog.instances_with(accelerator, provider) or catalog.instances_with(accelerator)
    priced = {p.item for p in catalog.prices if p.option == "on_demand"}
    options = tuple(i for i in options if i.instance in priced) or options
    if not options:
        msg = f"no instance in the catalog holds {accelerator!r}"
        raise PriceNotFoundError(msg)
    return options[0]


def resolve_cluster(plan: Plan, catalog: Catalog) -> tuple[Instance, int]:
    """Pick the instance and node count from ``instance``/``nodes`` or ``gpu``/``gpus``.

    With only a GPU named, the provider's largest instance holding it is chosen (training wants
    whole nodes); with only a GPU count, nodes = ceil(gpus / GPUs per node).
    """
    c = plan.cluster
    if c.instance is not None:
        inst = _named(lambda: catalog.instance(str(c.instance)), "cluster.instance")
        if inst.provider != c.provider:
            msg = f"instance {inst.instance!r} is a {inst.provider} instance, not {c.provider}"
            raise SpecError(msg, field="cluster.provider")
        if c.gpu is not None and catalog.accelerator(c.gpu).id != inst.accelerator:
            msg = f"instance {inst.instance!r} holds {inst.accelerator}, not {c.gpu!r}"
            raise SpecError(msg, field="cluster.gpu")
    else:
        assert c.gpu is not None
        accel = _named(lambda: catalog.accelerator(str(c.gpu)), "cluster.gpu")
        inst = instance_for_gpu(catalog, accel.id, c.provider)
    if c.nodes is not None:
        nodes = c.nodes
    else:
        assert c.gpus is not None
        nodes = math.ceil(c.gpus / inst.accelerator_count)
    return inst, nodes


_T = TypeVar("_T")


def _named(look_up: Callable[[], _T], field: str) -> _T:
    """A catalog look-up of a name the plan gave, its miss an error naming the plan's field
    (the API's 422 carries it; the CLI prefixes it), with the catalog's "did you mean"."""
    try:
        return look_up()
    except PriceNotFoundError as exc:
        raise SpecError(str(exc), field=field) from None


def _gpu_name_warnings(plan: Plan, catalog: Catalog) -> tuple[str, ...]:
    """A GPU named by a family (``a100``) is priced as one part of it: say which, and what
    else the name covers, since memory, bandwidth and the instance's price differ."""
    gpu = plan.cluster.gpu
    others = () if gpu is None else catalog.accelerator_namesakes(gpu)
    if gpu is None or not others:
        return ()
    acc = catalog.accelerator(gpu)
    note = (
        f"cluster.gpu {gpu!r} read as {acc.id} ({acc.name}); give {' or '.join(others)} to "
        "price the other part by that name"
    )
    return (note,)


def _cluster_warnings(plan: Plan, inst: Instance, nodes: int) -> tuple[str, ...]:
    """Whole nodes are billed: a GPU count that is not a multiple of the node size rounds up.

    A plan giving both ``nodes`` and ``gpus`` that disagree is an error: which one was meant?
    """
    asked = plan.cluster.gpus
    got = nodes * inst.accelerator_count
    if plan.cluster.nodes is not None and asked is not None and asked != got:
        msg = (
            f"{asked} GPUs, but cluster.nodes = {nodes} × {inst.instance} "
            f"({inst.accelerator_count} per node) hold {got}; give nodes or gpus, or make them "
            "agree"
        )
        raise SpecError(msg, field="cluster.gpus")
    if plan.cluster.nodes is None and asked is not None and asked != got:
        msg = (
            f"cluster.gpus = {asked}, but {inst.instance} holds {inst.accelerator_count} per "
            f"node: priced {nodes} node{'s' if nodes != 1 else ''} = {got} GPUs (clouds bill "
            "whole instances)"
        )
        return (msg, *_spot_share_warnings(plan, nodes))
    return _spot_share_warnings(plan, nodes)


def _spot_share_warnings(plan: Plan, nodes: int) -> tuple[str, ...]:
    """A spot share that is not a whole number of nodes is priced as the share (an expected mix,
    as the simulation and the planner need it), but a cluster buys whole nodes: say so."""
    share = plan.purchase.spot_fraction
    spot_nodes = share * nodes
    if abs(spot_nodes - round(spot_nodes)) < 1e-9:
        return ()
    lo, hi = math.floor(spot_nodes), math.ceil(spot_nodes)
    note = (
        f"purchase.spot_fraction = {share:g} of {nodes} node{'s' if nodes != 1 else ''} is "
        f"{spot_nodes:.3g} spot nodes: clouds bill whole instances, so the bill is a {share:g} "
        f"mix, not a cluster you can launch; {lo} or {hi} spot nodes is a spot_fraction of "
        f"{lo / nodes:.4g} or {hi / nodes:.4g}"
    )
    return (note,)


def tpu_slice_sizes(catalog: Catalog, inst: Instance, limit: int) -> tuple[int, ...] | None:
    """The chip counts a TPU is sold in (``defaults.cluster.tpu_slice_chips``: the provider's
    single-slice shapes, then Multislice as whole multiples of the largest), up to ``limit``;
    None for a machine billed per instance, or a TPU the table does not list.

    Google sells TPUs by slice shape (v6e: 1, 4, 8, ..., 256 chips), so a cluster of 362 or
    1,448 chips is not something a user can create: sizing and the planner pick from these."""
    table = catalog.table("defaults.cluster.tpu_slice_chips")
    if inst.billing != "chip" or table is None or inst.accelerator not in table:
        return None
    singles = sorted({int(c) for c in table[inst.accelerator]})
    largest = singles[-1]
    multi = range(2 * largest, limit + 1, largest)
    return tuple(c for c in (*singles, *multi) if c <= limit)


def nearest_slice(sizes: Sequence[int], chips: float) -> int:
    """The sold size nearest ``chips`` on a log scale (a √2 sweep step lands between two)."""
    return min(sizes, key=lambda c: (abs(math.log(c / chips)), c))


def _slice_warnings(catalog: Catalog, inst: Instance, nodes: int) -> tuple[str, ...]:
    """A TPU cluster of a chip count Google does not sell is priced as asked, with a warning
    naming the sold sizes on either side."""
    sizes = tpu_slice_sizes(catalog, inst, max(nodes, 1) * 2 + 1)
    if sizes is None or nodes in sizes:
        return ()
    below = max((c for c in sizes if c < nodes), default=None)
    above = min((c for c in sizes if c > nodes), default=None)
    near = " or ".join(f"{c:,}" for c in (below, above) if c is not None)
    a = catalog.assumption("defaults.cluster.tpu_slice_chips")
    note = (
        f"{nodes:,} {inst.accelerator} chips is not a slice size Google Cloud sells (single "
        f"slices {', '.join(str(c) for c in a.value[inst.accelerator])} chips, then Multislice "
        f"in whole multiples of the largest; {a.source.split(';')[0]}): the bill is of a "
        f"cluster that cannot be created; the nearest sold sizes are {near} chips"
    )
    return (note,)


def instance_family(instance: str) -> str:
    """The family an EC2 Instance Savings Plan is bought for: ``p5`` of ``p5.48xlarge``."""
    return instance.split(".", 1)[0]


def _savings_plan_kind(
    plan: Plan, inst: Instance, provider: str, orchestrator: str, region: str
) -> str:
    """Which AWS Savings Plan kind prices the commitment, checked against what it covers.

    Default: "sagemaker" under HyperPod (its nodes are SageMaker ``ml.*`` usage) and "compute"
    otherwise (the one kind that covers any family in any region, Trainium included). A kind
    that cannot cover the plan's usage is an error naming the kind that would: an EC2 Instance
    plan bought for another family is exactly how "switching to Trainium loses the discount".
    """
    p = plan.purchase
    if provider != "aws":
        if p.savings_plan_kind is not None or p.savings_plan_family is not None:
            field = (
                "purchase.savings_plan_kind"
                if p.savings_plan_kind is not None
                else "purchase.savings_plan_family"
            )
            msg = (
                f"AWS Savings Plan settings do not apply on {provider}: its commitment is priced "
                "from the catalog's sp_1yr/sp_3yr rate (committed-use discount or reservation); "
                f"remove {field}"
            )
            raise SpecError(msg, field=field)
        return ""
    sagemaker = orchestrator == "hyperpod"
    kind = p.savings_plan_kind or ("sagemaker" if sagemaker else "compute")
    if sagemaker and kind != "sagemaker":
        msg = (
            f"a {kind} Savings Plan does not cover SageMaker HyperPod (ml.* instances are "
            'SageMaker usage); a SageMaker Savings Plan would: savings_plan_kind = "sagemaker"'
        )
        raise SpecError(msg, field="purchase.savings_plan_kind")
    if not sagemaker and kind == "sagemaker":
        msg = (
            f"a SageMaker Savings Plan covers only SageMaker ml.* usage, not {orchestrator} "
            'instances; a Compute Savings Plan would (savings_plan_kind = "compute"), or '
            '"ec2-instance" for one family'
        )
        raise SpecError(msg, field="purchase.savings_plan_kind")
    family = p.savings_plan_family
    if family is not None and kind != "ec2-instance":
        msg = (
            f'savings_plan_family applies only to savings_plan_kind = "ec2-instance" (got {kind!r})'
        )
        raise SpecError(msg, field="purchase.savings_plan_family")
    own = instance_family(inst.instance)
    if family is not None and family != own and p.savings_plan != "none":
        msg = (
            f"an EC2 Instance Savings Plan for the {family} family does not cover {inst.instance} "
            f"({own} family, {region}); a Compute Savings Plan would (savings_plan_kind = "
            '"compute" covers any family in any region)'
        )
        raise SpecError(msg, field="purchase.savings_plan_family")
    return kind


def sagemaker_price(
    catalog: Catalog, instance: str, *, provider: str, region: str, as_of: date
) -> PricePoint | None:
    """The SageMaker ``ml.<instance>`` on-demand price HyperPod bills on ``as_of``: the catalog's
    own point, else one derived from another ``ml.*`` price by the EC2 price ratio, else None.

    Why this derivation. No provider-published ml.* table was found for every instance
    (``ml.p5en``, ``ml.trn1`` are missing); the pairs that were found all sit at about 1.15 ×
    EC2, but that ratio is read off third-party copies, so it is not used as a constant. What
    is provider data is the EC2 price list, so a missing ml.X is the anchor's ml.A price scaled
    by EC2's own price ratio on the same day: ml.X = ml.A × EC2(X) ÷ EC2(A)
    (``orchestration.sagemaker_anchor`` names A), for an accelerated instance of the catalog
    only (a CPU head node is not priced in a GPU node's proportion). It assumes SageMaker
    prices the two instances in EC2's proportion, which no provider document states, so the
    point is marked
    ``UNVERIFIED`` and its source shows both prices, their dates and the arithmetic.
    """
    item = f"ml.{instance}"
    own = catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of)
    if own is not None or provider != "aws":
        return own
    anchor = str(catalog.value("orchestration.sagemaker_anchor"))
    inst = catalog.instances.get(instance)
    if anchor == instance or inst is None or inst.stand_in or inst.accelerator_count < 1:
        return None  # a head or CPU node is not priced like an accelerated anchor

    def on_demand(item: str) -> PricePoint | None:
        return catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of)

    ml_a, ec2_a, ec2_x = on_demand(f"ml.{anchor}"), on_demand(anchor), on_demand(instance)
    if ml_a is None or ec2_a is None or ec2_x is None or ec2_x.stand_in or ec2_a.usd <= 0:
        return None
    usd = ml_a.usd * ec2_x.usd / ec2_a.usd
    source = (
        f"DERIVED, UNVERIFIED (no published {item} price in the catalog): ml.{anchor} "
        f"${ml_a.usd:,.6g} × EC2 {instance} ${ec2_x.usd:,.6g} ÷ EC2 {anchor} ${ec2_a.usd:,.6g} = "
        f"${usd:,.6g}/h, i.e. SageMaker taken to price the two instances in the EC2 price "
        f"list's proportion ({catalog.assumption('orchestration.sagemaker_anchor').source}); "
        f"ml.{anchor}: {ml_a.cite()}; EC2 {instance}: {ec2_x.cite()}; EC2 {anchor}: "
        f"{ec2_a.cite()}"
    )
    return PricePoint(
        provider=provider,
        region=ml_a.region,
        item=item,
        option="on_demand",
        unit=ml_a.unit,
        usd=usd,
        effective_from=max(ml_a.effective_from, ec2_a.effective_from, ec2_x.effective_from),
        source=source,
        stands_in_for=ml_a.stands_in_for,
    )


def hyperpod_spot_from(catalog: Catalog) -> date:
    """The first day a HyperPod cluster could run Spot nodes (``orchestration.hyperpod_spot_from``,
    the provider's dated document): before it, HyperPod instance groups were on-demand only."""
    return date.fromisoformat(str(catalog.value("orchestration.hyperpod_spot_from")))


def hyperpod_spot_note(
    catalog: Catalog, orchestrator: str, spot: float, run_date: date
) -> tuple[str, ...]:
    """The dated HyperPod Spot rule, said where it changes the plan: a HyperPod run dated before
    Spot was offered is priced with every node on demand (what it could have bought), not
    refused."""
    if orchestrator != "hyperpod" or spot <= 0 or run_date >= hyperpod_spot_from(catalog):
        return ()
    a = catalog.assumption("orchestration.hyperpod_spot_from")
    note = (
        f"purchase.spot_fraction = {spot:g} on HyperPod, but the run is dated "
        f"{run_date.isoformat()}, before HyperPod offered Spot ({a.value}: {a.source}): every "
        "node is priced on demand at the ml.* rate; date the run on or after "
        f"{a.value} to use Spot on HyperPod"
    )
    return (note,)


def hyperpod_unpriced(
    catalog: Catalog,
    inst: Instance,
    orchestrator: str,
    spot: float,
    provider: str,
    region: str,
    as_of: date,
) -> tuple[str, ...]:
    """What HyperPod's bill cannot price from published figures, said rather than guessed: a
    forecast warns with it, and the planner and the orchestrator comparison do not rank a
    HyperPod cluster whose premium is missing against priced ones as if it were free.

    ``spot`` is the share actually run on Spot (zero before HyperPod offered it,
    ``hyperpod_spot_note``)."""
    if orchestrator != "hyperpod":
        return ()
    out: list[str] = []
    ml = f"ml.{inst.instance}"
    if (
        sagemaker_price(catalog, inst.instance, provider=provider, region=region, as_of=as_of)
        is None
    ):
        anchor = catalog.value("orchestration.sagemaker_anchor")
        out.append(
            f"no published SageMaker {ml} price in the catalog on {as_of}, and none derivable "
            f"from ml.{anchor} by the EC2 price ratio: HyperPod nodes are priced at the EC2 "
            f"{inst.instance} rate and the ml.* premium is not included; add an {ml} on_demand "
            "price point (--catalog DIR) from the SageMaker pricing page"
        )
    if spot > 0:
        a = catalog.assumption("orchestration.hyperpod_spot")
        out.append(
            f"purchase.spot_fraction = {spot:g} on HyperPod: {a.value} ({a.source}); no published "
            "HyperPod Spot rate in the catalog, so spot nodes are priced at the EC2 Spot rate"
        )
    return tuple(out)


#: How each cloud spells a region (AWS: ``us-east-1``, ``us-gov-west-1``; Google Cloud:
#: ``us-central1``, ``northamerica-northeast1``; Azure: ``eastus2``, ``westeurope``): a name
#: that cannot be one (``mars-1`` on AWS, an empty string) is a typo, not a new region.
_REGION_SHAPE = {
    "aws": re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+$"),
    "gcp": re.compile(r"^[a-z]+-[a-z]+\d+$"),
    "azure": re.compile(r"^[a-z][a-z0-9]+$"),
}


def check_region(
    catalog: Catalog, provider: str, region: str, *, field: str = "cluster.region"
) -> None:
    """A region that cannot be the provider's (misspelt, empty, or one the catalog knows only
    for another cloud: ``us-central1`` on AWS) is a mistake, not a region without local prices:
    refuse it rather than price the reference region.

    A well-formed region the catalog does not know is still priced at the provider's reference
    region, with a warning (new regions appear before the catalog learns them).
    """
    own = catalog.regions(provider)
    known = ", ".join(sorted(own)) or "none"
    others = [c for c in PROVIDERS if c != provider and region in catalog.regions(c)]
    if others and region not in own:
        msg = (
            f"{region!r} is a {others[0]} region, not {provider}; {provider} regions in the "
            f"catalog: {known}"
        )
        raise SpecError(msg, field=field)
    shape = _REGION_SHAPE.get(provider)
    if shape is not None and not shape.match(region) and region not in own:
        msg = f"{region!r} is not a region name of {provider}; its regions in the catalog: {known}"
        raise SpecError(msg, field=field)


def _orchestrator_on(plan: Plan, provider: str) -> str:
    """The plan's orchestrator on the cloud the instance belongs to.

    The plan validator resolved it for ``cluster.provider``; a plan naming only a GPU may land
    on another cloud (``gpu = "tpu-v6e"`` is a GCP chip), where self-managed VMs are called
    "vm" and AWS services do not exist.
    """
    offered = ORCHESTRATORS[provider]
    orchestrator = orchestrator_on(provider, plan.cluster.orchestrator)
    if orchestrator not in offered:
        msg = (f"{orchestrator!r} is an AWS service, but the plan's GPU runs on {provider}; "
               f"allowed values for {provider}: {', '.join(offered)}")  # fmt: skip
        raise SpecError(msg, field="cluster.orchestrator")
    return orchestrator


def _zone_letters(count: int) -> tuple[str, ...]:
    """AWS AZ name suffixes: a region with N zones names them a, b, ... (AWS 'AWS Availability
    Zones': the code of a zone is its region code followed by a letter)."""
    return tuple(chr(ord("a") + i) for i in range(count))


def resolve_zone(
    catalog: Catalog, provider: str, region: str, zone: str, field: str
) -> tuple[str | None, str]:
    """Check ``zone`` against the region's zones; return its zone ID (None where only an
    account-specific AWS AZ name was given) and a note for the reader ("" when none).

    Raises:
        SpecError: the zone is not one of the region's (the message lists them).
    """
    known = catalog.zones(provider, region)
    if known is None:
        listed = sorted(
            {k.split(".")[2] for k in catalog.assumptions if k.startswith(f"zones.{provider}.")}
        )
        note = (
            f"{field} = {zone!r} not checked: the catalog lists no zones for {provider} {region} "
            f"(zones are listed for {', '.join(listed) or 'no region'})"
        )
        return None, note
    if zone in known:
        return zone, ""
    names = tuple(f"{region}{c}" for c in _zone_letters(len(known))) if provider == "aws" else ()
    if zone in names:
        note = (
            f"{field} = {zone!r} is an AZ name, which AWS maps to a physical zone per account: "
            f"zone-level prices need its AZ ID ({', '.join(known)}; see 'aws ec2 "
            "describe-availability-zones')"
        )
        return None, note
    where = catalog.zone_region(provider, zone)
    hint = f" ({zone!r} is in {where})" if where is not None else suggest(zone, (*known, *names))
    allowed = ", ".join((*known, *names))
    msg = f"{zone!r} is not a zone of {provider} {region}.{hint} Allowed: {allowed}"
    raise SpecError(msg, field=field)


def _derived_location(
    catalog: Catalog,
    provider: str,
    region: str,
    zone: str | None,
    data_region: str,
    data_zone: str | None,
) -> str | None:
    """Where the data sits relative to the cluster, when its region or zone says so (else None)."""
    if data_region != region:
        if data_zone is not None:
            resolve_zone(catalog, provider, data_region, data_zone, "data.zone")
        return "cross_region"
    if data_zone is None:
        return None
    data_id, _ = resolve_zone(catalog, provider, data_region, data_zone, "data.zone")
    if zone is None:
        msg = (
            "data.zone needs cluster.zone too: the transfer depends on whether the two zones differ"
        )
        raise SpecError(msg, field="data.zone")
    cluster_id, _ = resolve_zone(catalog, provider, region, zone, "cluster.zone")
    if catalog.zones(provider, region) is not None and (data_id is None) != (cluster_id is None):
        msg = (
            f"data.zone = {data_zone!r} and cluster.zone = {zone!r} mix an AZ ID and an "
            "account-specific AZ name, which cannot be compared; give both as AZ IDs"
        )
        raise SpecError(msg, field="data.zone")
    return "same_az" if data_zone == zone else "cross_az"


def _data_placement(
    plan: Plan, catalog: Catalog, d: _Defaults, provider: str, region: str, zone: str | None
) -> tuple[str, str, str, str, str | None, tuple[str, ...]]:
    """Source, location, provider, region and zone of the training data, and notes.

    ``location`` is derived from the data's own ``region``/``zone`` when the plan gives them
    (a region other than the cluster's is ``cross_region``; a zone other than the cluster's is
    ``cross_az``), else taken from ``data.location``. A stated location that contradicts them
    is an error: which one was meant?
    """
    data = plan.data
    source = str(d.get(data.source, "defaults.data.source"))
    notes: list[str] = []
    if source == "on_premises":
        notes.append(
            "data.source = on_premises: data comes in over your own network; the cloud charges "
            "nothing for data in, and your side's egress or Direct Connect/VPN fees are not cloud "
            "list prices, so they are not in this forecast"
        )
        return source, "external", "", "", None, tuple(notes)
    if source == "other_cloud":
        other = str(data.provider)
        if other == provider:
            msg = (
                f"provider {other!r} is the cluster's own cloud; for data there use source = "
                '"s3", "fsx" or "ebs" with region (and zone) instead'
            )
            raise SpecError(msg, field="data.provider")
        if data.region is not None:
            check_region(catalog, other, data.region, field="data.region")
        other_region = data.region or str(d.get(None, f"defaults.cluster.region_{other}"))
        return source, "external", other, other_region, None, ()
    data_region = data.region or region
    if data.region is not None:
        check_region(catalog, provider, data.region, field="data.region")
    data_zone = data.zone
    derived = _derived_location(catalog, provider, region, zone, data_region, data_zone)
    if derived is not None and data.location is not None and data.location != derived:
        msg = (
            f"location = {data.location!r}, but data.region/zone put the data "
            f"{derived.replace('_', ' ')} of the cluster; give one or make them agree"
        )
        raise SpecError(msg, field="data.location")
    if data.region == region and data.location == "cross_region":
        msg = (
            f"location = 'cross_region', but data.region = {region!r} is the cluster's own "
            'region; give the region the data is in, or location = "same_az" or "cross_az"'
        )
        raise SpecError(msg, field="data.location")
    location = derived or str(d.get(data.location, "defaults.data.location"))
    if source == "ebs" and location != "same_az" and provider == "aws":
        # An EBS volume attaches only to instances in its own Availability Zone (AWS EBS user
        # guide), and to one region's instances: the data would first need a server or a copy.
        msg = (
            f"data.source = ebs with location = {location!r}: an EBS volume attaches only to "
            "instances in its own Availability Zone, so the cluster cannot read it from there; "
            'use location = "same_az", or source = "fsx" or "s3" for data in another zone or region'
        )
        raise SpecError(msg, field="data.location")
    if source == "s3" and location == "cross_az":
        notes.append(
            "data.location = cross_az has no cost for data in s3: object storage is regional, and "
            "reads from any zone of its region carry no transfer charge (AWS S3 pricing, Data "
            "Transfer)"
        )
    return source, location, provider, data_region, data_zone, tuple(notes)


def software_age_years(accel: Accelerator, on: date) -> float | None:
    """Years from the accelerator's launch to ``on``, the run's date (the plan's ``run.date``,
    else ``prices.as_of``, else today): the time model's software-maturity input."""
    if accel.launched is None:
        return None
    return (on - accel.launched).days / _DAYS_PER_YEAR


def fused_attention_on(catalog: Catalog, on: date) -> bool:
    """Whether a run on ``on`` (its software date) has a fused, IO-aware attention kernel:
    not before FlashAttention's release (``time.fused_attention_since``); before it the
    seq × seq scores went through HBM, which the time model charges as unfused attention."""
    return on >= date.fromisoformat(str(catalog.value("time.fused_attention_since")))


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
    return math.sqrt(2.0 * stall_hours * mtbf_hours)


def _date_warnings(catalog: Catalog, as_of: date, run_date: date, today: date) -> tuple[str, ...]:
    """Dates a careless plan gets wrong: a run long after its prices, or prices past anything the
    catalog knows.

    A price date before the instance was sold is the catalog's error (``Catalog.price`` knows the
    launch date); a run date before the accelerator existed is the time model's warning (it knows
    the maturity it then assumes).
    """
    out = []
    if (run_date - as_of).days > _RUN_AFTER_PRICES_DAYS:
        years = (run_date - as_of).days / _DAYS_PER_YEAR
        out.append(
            f"run.date {run_date.isoformat()} is {years:.1f} years after prices.as_of "
            f"{as_of.isoformat()}: the run is priced at prices older than it; set prices.as_of "
            "(--as-of) nearer the run date"
        )
    beyond = beyond_price_data(catalog, as_of, today)
    if beyond is not None:
        out.append(f"prices.as_of {beyond}")
    return tuple(out)


def beyond_price_data(catalog: Catalog, as_of: date, today: date) -> str | None:
    """Why a price date past the catalog's snapshot and today is priced at the newest points
    (every command pricing at a date says it: the forecast, the commitment advisor), or None."""
    if as_of <= max(catalog.snapshot, today):
        return None
    return (
        f"{as_of.isoformat()} is beyond the price data (catalog snapshot "
        f"{catalog.snapshot.isoformat()}, today {today.isoformat()}): no price after it is "
        "known, so the newest price points are carried forward"
    )


@record
class Job:
    """A plan resolved against the catalog: which cluster, where, when, whose data, which
    commitment kind, and what the user should be told about how the plan was read.

    ``resolve_job`` makes every look-up, default and validation of this context once;
    ``usage_for`` works out the quantities from it (time model, checkpoints, interruptions).
    """

    instance: Instance
    accelerator: Accelerator
    nodes: int
    provider: str
    orchestrator: str
    region: str
    zone_id: str | None
    as_of: date
    run_date: date
    data_source: str
    data_location: str
    data_provider: str
    data_region: str
    data_zone: str | None
    savings_plan_kind: str
    warnings: tuple[str, ...]
    #: Notes of the what-ifs applied to the plan (``Plan.whatif``), forecast warnings of their own
    #: kind.
    whatif_notes: tuple[str, ...]
    #: Catalog assumptions used to fill what the plan left out, cited, in order of use.
    assumed: tuple[str, ...]

    @property
    def gpus(self) -> int:
        """Accelerators in the cluster."""
        return self.nodes * self.instance.accelerator_count


def resolve_job(plan: Plan, catalog: Catalog, *, today: date | None = None) -> Job:
    """Resolve the plan's cluster, region, zone, data placement, dates and commitment kind.

    Raises the plan's context errors (``SpecError``, ``PriceNotFoundError``, ``CatalogError``)
    with the field named, before any quantity is worked out.
    """
    d = _Defaults(catalog)
    inst, nodes = resolve_cluster(plan, catalog)
    provider = inst.provider
    orchestrator = _orchestrator_on(plan, provider)
    given = plan.cluster.region
    region = str(given if given is not None else d.get(None, f"defaults.cluster.region_{provider}"))
    check_region(catalog, provider, region)
    zone_notes: list[str] = []
    zone_id: str | None = None
    if plan.cluster.zone is not None:
        zone_id, note = resolve_zone(catalog, provider, region, plan.cluster.zone, "cluster.zone")
        zone_notes += [note] if note else []
    placement = _data_placement(plan, catalog, d, provider, region, plan.cluster.zone)
    data_source, data_location, data_provider, data_region, data_zone, data_notes = placement
    day = today or date.today()  # noqa: DTZ011 - a calendar date, not a time
    as_of = plan.prices.as_of or day
    run_date = plan.run.date or as_of
    spot = plan.purchase.spot_fraction
    spot_note = hyperpod_spot_note(catalog, orchestrator, spot, run_date)
    spot = 0.0 if spot_note else spot
    warnings = (
        *_gpu_name_warnings(plan, catalog),
        *_cluster_warnings(plan, inst, nodes),
        *_slice_warnings(catalog, inst, nodes),
        *_data_read_warnings(plan, catalog),
        *_spot_before_cut_warnings(catalog, inst, provider, region, as_of, spot),
        *spot_note,
        *hyperpod_unpriced(catalog, inst, orchestrator, spot, provider, region, as_of),
        *_fsx_size_warnings(plan, catalog, provider),
        *_checkpoint_size_warnings(plan),
        *_ignored_input_warnings(plan),
        *_date_warnings(catalog, as_of, run_date, day),
        *zone_notes,
        *data_notes,
    )
    return Job(
        instance=inst,
        accelerator=catalog.accelerator(inst.accelerator),
        nodes=nodes,
        provider=provider,
        orchestrator=orchestrator,
        region=region,
        zone_id=zone_id,
        as_of=as_of,
        run_date=run_date,
        data_source=data_source,
        data_location=data_location,
        data_provider=data_provider,
        data_region=data_region,
        data_zone=data_zone,
        savings_plan_kind=_savings_plan_kind(plan, inst, provider, orchestrator, region),
        warnings=warnings,
        whatif_notes=plan.whatif.notes,
        assumed=tuple(d.used),
    )


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
    chips = _chips_per_host(catalog, d, job)
    hosts = math.ceil(job.nodes / chips)
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
        warnings=(*job.warnings, *_checkpoint_fit_warnings(checkpoint, storage, data, hosts)),
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


def _chips_per_host(catalog: Catalog, d: _Defaults, job: Job) -> int:
    """Chips per VM host of a per-chip (TPU) instance (``defaults.cluster.chips_per_host``), 1
    for an instance billed whole (its node is its host)."""
    if job.instance.billing != "chip":
        return 1
    table = catalog.table("defaults.cluster.chips_per_host") or {}
    chips = int(table.get(job.accelerator.id, 1))
    if chips > 1:
        d.used.append(
            f"defaults.cluster.chips_per_host: {chips} {job.accelerator.id} chips per VM host "
            f"({catalog.assumption('defaults.cluster.chips_per_host').source})"
        )
    return chips


def _compute(
    plan: Plan,
    catalog: Catalog,
    d: _Defaults,
    job: Job,
    measured_mfu: float | None,
    time_scale: float,
) -> tuple[TimeEstimate, Compute]:
    """The time model's answer for the plan, and the training and sync-stall hours it gives."""
    m = plan.model
    seq_len = int(d.get(m.seq_len, "defaults.model.seq_len"))
    batch, batch_note = 0.0, None
    if m.global_batch_tokens is not None:
        batch = float(m.global_batch_tokens)
    elif m.params:
        # The batch a competent team picks grows with the cluster (timemodel.default_global_batch).
        batch, batch_note = default_global_batch(
            catalog, gpus=job.gpus, params=m.params, active_params=m.active_params, seq_len=seq_len
        )
        d.used.append(f"defaults.model.global_batch_tokens: {batch_note}")
    cv = float(d.get(plan.reliability.straggler_cv, "reliability.straggler_cv"))
    # Hours given with a model size but no token count: the time model cannot count steps, but
    # the step itself (layout, bytes synced, compute per step) needs only the parameter count and
    # the batch, so one step of the batch is modelled and its stall fractions apply to the hours.
    per_step_only = plan.run.hours is not None and m.params is not None and m.tokens is None
    est = _estimate_time(
        catalog=catalog,
        accelerator=job.accelerator,
        instance=job.instance,
        nodes=job.nodes,
        precision=m.precision,
        hours=None if per_step_only else plan.run.hours,
        params=m.params,
        active_params=m.active_params,
        tokens=batch if per_step_only else m.tokens,
        global_batch_tokens=batch or 1.0,
        seq_len=seq_len,
        layers=m.layers,
        d_model=m.d_model,
        straggler_cv=cv,
        measured_mfu=measured_mfu,
        software_age_years=software_age_years(job.accelerator, job.run_date),
        batch_note=batch_note,
        architecture=m.architecture,
        attention_share=m.attention_share,
        fused_attention=fused_attention_on(catalog, job.run_date),
    )
    if per_step_only and plan.run.hours is not None:
        est = _given_hours_with_step_model(est, plan.run.hours, batch)
    est = _with_whatif(est, plan.whatif)
    hours = est.compute_hours * time_scale
    return est, Compute(
        params=m.params,
        active_params=m.active_params,
        tokens=m.tokens,
        flops=est.flops,
        hours=hours,
        sync_stall_hours=hours * est.sync_stall_fraction,
    )


def _with_whatif(est: TimeEstimate, whatif: WhatIf) -> TimeEstimate:
    """The time model's answer after a what-if (``Plan.whatif``): a sparse-attention what-if
    removes its share of the hours (modelled hours stay modelled, so the error band still
    applies), and MFU is on the FLOPs actually performed, not the dense model's."""
    if not whatif.time_saving and not whatif.flops_saving and not whatif.notes:
        return est
    return replace(
        est,
        compute_hours=est.compute_hours * (1.0 - whatif.time_saving),
        flops=None if est.flops is None else est.flops * (1.0 - whatif.flops_saving),
        factors=(*est.factors, *(("whatif", note) for note in whatif.notes)),
    )


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
        rate = min(
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
    if writes.asynchronous and writes.size_gb > 0 and ck.interval_hours is None and per_hour > 0:
        given = ck.write_gbytes_per_s_per_node
        rate = _write_rate(d, given, writes.hosts, writes.to)
        floor = max(floor, writes.size_gb / rate / 3600.0)
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


def _spot_before_cut_warnings(
    catalog: Catalog, inst: Instance, provider: str, region: str, as_of: date, spot: float
) -> tuple[str, ...]:
    """A plan dated after an on-demand price cut whose spot price point is from before the cut:
    spot prices follow the on-demand price they are a discount from, so a pre-cut spot rate
    set against a post-cut on-demand rate makes spot look worse (or better) than it was, and
    the forecast says both dates rather than blend two eras silently."""
    if spot <= 0:
        return ()
    item = inst.instance
    od = catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of)
    sp = catalog.find_price(item, "spot", provider=provider, region=region, as_of=as_of)
    if od is None or sp is None or sp.effective_from >= od.effective_from:
        return ()
    before = catalog.find_price(
        item, "on_demand", provider=provider, region=region,
        as_of=od.effective_from - timedelta(days=1),
    )  # fmt: skip
    if before is None or before.usd <= od.usd:
        return ()
    note = (
        f"the {item} spot price (${sp.usd:,.4g}/h) is dated {sp.effective_from.isoformat()}, "
        f"before the on-demand price cut of {od.effective_from.isoformat()} (${before.usd:,.4g} → "
        f"${od.usd:,.4g}/h) that the plan's date {as_of.isoformat()} is priced after: spot is "
        "priced from before the cut; add a spot price point after the cut (--catalog DIR or "
        "'trainbill prices update')"
    )
    return (note,)


def _data_read_warnings(plan: Plan, catalog: Catalog) -> tuple[str, ...]:
    """The data a plan reads (dataset × epochs) against what its tokens take at the catalog's
    bytes per token: two figures of the same thing, so a gap beyond
    ``defaults.model.read_mismatch_factor`` is a wrong field, and the forecast says so rather
    than price data reads that do not match the training it prices."""
    gb, tokens = plan.data.dataset_gb, plan.model.tokens
    if gb is None or tokens is None or gb <= 0 or tokens <= 0:
        return ()
    epochs = float(
        plan.data.epochs if plan.data.epochs is not None else catalog.value("defaults.data.epochs")
    )
    bpt = float(catalog.value("defaults.model.bytes_per_token"))
    expected = tokens * bpt / 1e9
    read = gb * epochs
    factor = float(catalog.value("defaults.model.read_mismatch_factor"))
    if expected / factor <= read <= expected * factor:
        return ()
    note = (
        f"the data read (data.dataset_gb {gb:,.0f} GB × {epochs:g} epochs = {read:,.0f} GB) does "
        f"not match the tokens trained (model.tokens {tokens:.3g} × {bpt:g} bytes per token = "
        f"{expected:,.0f} GB): {max(read, expected) / min(read, expected):.1f}× apart, beyond "
        f"{factor:g}× (defaults.model.read_mismatch_factor); data lines price {read:,.0f} GB: "
        "check data.dataset_gb, data.epochs and model.tokens"
    )
    return (note,)


def _dataset_gb(plan: Plan, catalog: Catalog, d: _Defaults) -> float:
    """The plan's dataset size, else its tokens at the catalog's bytes per token, else 0."""
    if plan.data.dataset_gb is not None:
        return plan.data.dataset_gb
    if plan.model.tokens is not None:
        d.used.append(catalog.assumption("defaults.model.bytes_per_token").cite())
        return plan.model.tokens * float(catalog.value("defaults.model.bytes_per_token")) / 1e9
    return 0.0


def _storage(plan: Plan, d: _Defaults, writes: _Writes, provider: str, on: date) -> Storage:
    """Block storage per node (the plan's, else defaults) and the file system already read."""
    st = plan.storage
    out = Storage(
        ebs_gb_per_node=float(d.get(st.ebs_gb_per_node, "defaults.storage.ebs_gb_per_node")),
        ebs_iops=float(d.get(st.ebs_iops, "defaults.storage.ebs_iops")),
        ebs_throughput_mibps=float(
            d.get(st.ebs_throughput_mibps, "defaults.storage.ebs_throughput_mibps")
        ),
        fsx_capacity_gb=writes.to.fsx_gb,
        fsx_tier=writes.to.fsx_tier,
    )
    if provider == "aws":
        _check_gp3(d.catalog, out, on)
    return out


def gp3_limits(catalog: Catalog, on: date) -> tuple[float, float, str]:
    """gp3's per-volume (IOPS, MiB/s) limits for a volume used on ``on``, and their basis: AWS
    raised them from 16,000 / 1,000 to 80,000 / 2,000 (``whatif.gp3_limits_raised``), so a run
    dated before the raise is held to the old ones (the seed article's gp3 wall was real then).
    """
    raised = date.fromisoformat(str(catalog.value("whatif.gp3_limits_raised")))
    if on < raised:
        iops = float(catalog.value("whatif.gp3_max_iops_before"))
        mibps = float(catalog.value("whatif.gp3_max_throughput_mibps_before"))
        return iops, mibps, f"gp3's limits before AWS raised them on {raised.isoformat()}"
    iops = float(catalog.value("whatif.gp3_max_iops"))
    mibps = float(catalog.value("whatif.gp3_max_throughput_mibps"))
    return iops, mibps, f"gp3's limits since AWS raised them on {raised.isoformat()}"


def _check_gp3(catalog: Catalog, st: Storage, on: date) -> None:
    """A gp3 volume AWS would not create is an error, not a bill: IOPS above the baseline need
    500 per GiB of volume and at most the per-volume limit; throughput above the baseline needs
    0.25 MiB/s per provisioned IOPS and at most the per-volume limit (AWS EBS volume types;
    ``whatif.gp3_*`` in the catalog). Priced as stated, 1,000,000 IOPS on a 10 GB volume billed
    thousands of dollars of IOPS no volume can have."""
    free_iops = float(catalog.value("defaults.storage.ebs_iops"))
    free_mibps = float(catalog.value("defaults.storage.ebs_throughput_mibps"))
    max_iops, max_mibps, when = gp3_limits(catalog, on)
    per_gib = float(catalog.value("whatif.gp3_max_iops_per_gib"))
    per_iops = float(catalog.value("whatif.gp3_max_mibps_per_iops"))
    most_iops = min(max_iops, max(free_iops, per_gib * st.ebs_gb_per_node))
    most_mibps = min(max_mibps, max(free_mibps, per_iops * st.ebs_iops))
    if st.ebs_gb_per_node <= 0 and (
        st.ebs_iops > free_iops or st.ebs_throughput_mibps > free_mibps
    ):
        msg = (
            f"no EBS volume (0 GB) to provision {st.ebs_iops:,.0f} IOPS and "
            f"{st.ebs_throughput_mibps:,.0f} MiB/s on; give the volume's size, or leave IOPS "
            f"and throughput at gp3's {free_iops:,.0f} / {free_mibps:,.0f} baseline"
        )
        raise SpecError(msg, field="storage.ebs_gb_per_node")
    checks = (
        (
            "storage.ebs_iops",
            st.ebs_iops > most_iops,
            (
                f"{st.ebs_iops:,.0f} IOPS on a {st.ebs_gb_per_node:,.0f} GB gp3 volume: gp3 allows "
                f"{free_iops:,.0f} to {most_iops:,.0f} here ({per_gib:,.0f} IOPS per GiB, at most "
                f"{max_iops:,.0f} per volume, {when}; AWS EBS volume types)"
            ),
        ),
        (
            "storage.ebs_throughput_mibps",
            st.ebs_throughput_mibps > most_mibps,
            (
                f"{st.ebs_throughput_mibps:,.0f} MiB/s on a gp3 volume with "
                f"{st.ebs_iops:,.0f} IOPS: gp3 allows {free_mibps:,.0f} to {most_mibps:,.0f} here "
                f"({per_iops:g} MiB/s per provisioned IOPS, at most {max_mibps:,.0f} per volume, "
                f"{when}; "
                "raise storage.ebs_iops for more)"
            ),
        ),
    )
    for name, beyond, msg in checks:
        if beyond:
            raise SpecError(msg, field=name)


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


def _data(plan: Plan, d: _Defaults, job: Job, dataset_gb: float) -> Data:
    """The dataset, its placement (``resolve_job``), epochs and object size."""
    data = plan.data
    return Data(
        dataset_gb=dataset_gb,
        source=job.data_source,
        location=job.data_location,
        provider=job.data_provider,
        region=job.data_region,
        zone=job.data_zone,
        epochs=float(d.get(data.epochs, "defaults.data.epochs")),
        object_mb=float(d.get(data.object_mb, "defaults.data.object_mb")),
    )


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


#: Recent time-model answers (``_estimate_time``), most recent last. Each entry keeps the
#: objects its key names by identity, so an identity cannot be reused while it is cached.
_TIME_CACHE: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], TimeEstimate]] = OrderedDict()
_TIME_CACHE_SIZE = 512
_TIME_LOCK = threading.Lock()
_BY_IDENTITY = ("accelerator", "instance")


def _estimate_time(*, catalog: Catalog, **inputs: Any) -> TimeEstimate:
    """``timemodel.estimate_time``, remembering its recent answers.

    The time model is pure and the costliest step of ``usage_for``; the planner asks it the same
    question for every orchestrator of a cluster (restart time and fees differ, the run's hours
    do not). The key is the time function itself (the fit tool swaps in one with candidate fit
    parameters, and must never be answered from another function's cache), the catalog and the
    accelerator/instance records by identity, and every other input by value.
    """
    fn = estimate_time  # this module's global at call time: the real one or a swapped-in one
    held = (fn, catalog, *(inputs[k] for k in _BY_IDENTITY if k in inputs))
    key = (
        *(id(o) for o in held),
        *((k, v) for k, v in sorted(inputs.items()) if k not in _BY_IDENTITY),
    )
    with _TIME_LOCK:  # the web app prices plans on several threads
        hit = _TIME_CACHE.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], held, strict=True)):
            _TIME_CACHE.move_to_end(key)
            return hit[1]
    est = fn(catalog=catalog, **inputs)
    with _TIME_LOCK:
        _TIME_CACHE[key] = (held, est)
        if len(_TIME_CACHE) > _TIME_CACHE_SIZE:
            _TIME_CACHE.popitem(last=False)
    return est


#: Time-model factors that count a whole run's FLOPs or hours: meaningless for a single modelled
#: step, so ``_given_hours_with_step_model`` replaces them with the plan's hours.
_RUN_TOTAL_FACTORS = frozenset({"flops", "compute", "hours"})


def _given_hours_with_step_model(
    step: TimeEstimate, hours: float, batch_tokens: float
) -> TimeEstimate:
    """The plan's hours of pure training, stalled by the fractions of one modelled step.

    ``step`` is the time model run on exactly one global batch: its layout holds the per-step
    seconds of compute, data-parallel sync, tensor-parallel traffic and pipeline bubble, whose
    ratios do not depend on how many steps the run takes. Without a token count there is no
    FLOP total, so FLOPs and MFU stay unknown rather than being made up from one step.
    """
    lay = step.layout
    assert lay is not None  # a model size was given, so the time model chose a layout
    note = (
        f"{hours:g} h of pure training, as given in the plan; model.tokens not given, so the "
        f"stall fractions below come from one modelled step of {batch_tokens:,.0f} tokens: "
        f"{lay.busy_s:.2f} s of compute and host work, ≈ {hours * 3600.0 / lay.busy_s:,.0f} steps "
        f"in {hours:g} h"
    )
    factors = [(key, text) for key, text in step.factors if key not in _RUN_TOTAL_FACTORS]
    at = next((i for i, (key, _) in enumerate(factors) if key == "communication"), len(factors))
    factors.insert(at, ("hours", note))
    return replace(
        step,
        compute_hours=hours,
        flops=None,
        base_mfu=None,
        factors=tuple(factors),
        hours_given=True,
    )


def lustre_size_gib(catalog: Catalog, provider: str, tier: str, gib: float) -> float:
    """The Lustre file system ``provider`` creates when asked for ``gib`` GiB in ``tier``: 0 for
    none, else the smallest size it offers that holds the request, billed whole.

    Each cloud has its own sizes (``whatif.lustre_sizes_<provider>``, per tier: minimum, step,
    and the size above which a larger step applies): FSx for Lustre 1,200 GiB, 2,400 or a
    multiple of 2,400; Google Cloud Managed Lustre 9,000 GiB and multiples at 1000 MBps per TiB
    (18,000 / 36,000 / 72,000 for the slower tiers); Azure Managed Lustre 4, 8 or 16 TiB steps.
    So a 3,000 GiB request pays for 4,800 GiB on AWS and for 9,000 on Google Cloud. A tier a
    provider's table lacks keeps the stated size (its price is then the catalog's to answer)."""
    if gib <= 0:
        return 0.0
    rule = _lustre_rule(catalog, provider, tier)
    if rule is None:
        return gib
    minimum, step, threshold, large_step = rule
    size = minimum if gib <= minimum else math.ceil(gib / step - 1e-12) * step
    if threshold > 0 and size > threshold:
        size = math.ceil(gib / large_step - 1e-12) * large_step
    return float(size)


def lustre_gb_per_gib(catalog: Catalog, provider: str) -> float:
    """GB priced per GiB of Lustre capacity: AWS bills the GiB capacity as "GB-month" (1); the
    catalog's Google and Azure rates are per decimal GB, converted from per-GiB list prices."""
    table = _lustre_table(catalog, provider)
    return 1.0 if table is None else float(table["gb_per_gib"])


def _lustre_rule(
    catalog: Catalog, provider: str, tier: str
) -> tuple[float, float, float, float] | None:
    table = _lustre_table(catalog, provider)
    rule = None if table is None else table["tiers"].get(tier)
    if rule is None:
        return None
    minimum, step, threshold, large_step = (float(x) for x in rule)
    return minimum, step, threshold, large_step


def _lustre_table(catalog: Catalog, provider: str) -> Mapping[str, Any] | None:
    """``whatif.lustre_sizes_<provider>``, or None for a provider without one."""
    return catalog.table(f"whatif.lustre_sizes_{provider}")


def fsx_throughput_mbps(catalog: Catalog, gb: float, tier: str) -> float:
    """MB/s an FSx for Lustre file system of ``gb`` GiB serves: AWS's 'TiB' of the per-unit
    throughput is 1,000 of its GiB (``whatif.fsx_gib_per_tib``)."""
    return gb / float(catalog.value("whatif.fsx_gib_per_tib")) * FSX_TIER_MBPS_PER_TIB[tier]


def _ignored_input_warnings(plan: Plan) -> tuple[str, ...]:
    """Stated inputs that another stated input makes moot: each is said, since a user who
    wrote one expects it to change the bill and it does not."""
    p, st, net = plan.purchase, plan.storage, plan.network
    out: list[str] = []
    if (p.savings_plan_coverage or 0) > 0 and p.savings_plan in (None, "none"):
        out.append(
            f"purchase.savings_plan_coverage = {p.savings_plan_coverage:g} has no effect without "
            "purchase.savings_plan (1yr or 3yr)"
        )
    if p.savings_plan not in (None, "none") and p.spot_fraction >= 1:
        out.append(
            f"purchase.savings_plan = {p.savings_plan} with every node on spot: a Savings Plan "
            "covers on-demand hours only, so it covers nothing here"
            + (
                ", and a term bought for the run is charged in full"
                if p.commitment != "existing"
                else ""
            )
        )
    if st.fsx_tier is not None and not st.fsx_capacity_gb:
        out.append(
            f"storage.fsx_tier = {st.fsx_tier} has no effect without storage.fsx_capacity_gb"
        )
    ck = plan.checkpoint
    if ck.retention_days and ck.target not in (None, "s3"):
        out.append(
            f"checkpoint.retention_days = {ck.retention_days:g} is not priced for checkpoints "
            f"on {ck.target}: only S3 keeps them after the run in this forecast (the file system "
            "or volume is billed for the run's length)"
        )
    if net.s3_via_nat and net.nat_gateways == 0:
        out.append(
            "network.s3_via_nat = true with network.nat_gateways = 0: there is no gateway to "
            "route object-storage traffic through, so none is billed as NAT processing"
        )
    return tuple(out)


def _checkpoint_size_warnings(plan: Plan) -> tuple[str, ...]:
    """Without the model's size or a stated checkpoint size nothing about checkpoints can be
    priced (stall, storage, requests); a $0 there must be said, not left to look like free."""
    if plan.checkpoint.size_gb is not None or plan.model.params is not None:
        return ()
    note = (
        "no checkpoint size: checkpoint writes, their storage and requests are not priced ($0); "
        "give model.params (14 bytes per parameter) or checkpoint.size_gb"
    )
    return (note,)


def _fsx_size_warnings(plan: Plan, catalog: Catalog, provider: str) -> tuple[str, ...]:
    """A stated Lustre size the provider does not create is priced at the size it would create,
    and said (the plan's size is what one would type in the console, in GiB)."""
    gib = plan.storage.fsx_capacity_gb
    if gib is None or gib <= 0:
        return ()
    tier = str(plan.storage.fsx_tier or catalog.value("defaults.storage.fsx_tier"))
    made = lustre_size_gib(catalog, provider, tier, gib)
    if made == gib:
        return ()
    product = _lustre_product(catalog, provider)
    note = (
        f"storage.fsx_capacity_gb = {gib:,.0f} is not a size {product} creates in the {tier} "
        f"tier: priced as the {made:,.0f} GiB file system it would create"
    )
    return (note,)


def _checkpoint_fit_warnings(
    ck: Checkpoint, st: Storage, data: Data, hosts: int
) -> tuple[str, ...]:
    """Checkpoints kept on the file system (and the dataset, when it is read from there), or
    each host's shards of them on its EBS volume, that do not fit there: the bill prices the
    storage as sized, but that run cannot keep them. Said, not refused: a team may prune or
    copy checkpoints out as it goes."""
    if ck.target == "ebs" and ck.size_gb > 0 and hosts > 0:
        shard = ck.size_gb * ck.keep_last / hosts
        if shard <= st.ebs_gb_per_node:
            return ()
        note = (
            f"checkpoint.keep_last = {ck.keep_last} checkpoints of {ck.size_gb:,.0f} GB put "
            f"{shard:,.0f} GB of shards on each of the {hosts} nodes' EBS volumes, which hold "
            f"{st.ebs_gb_per_node:,.0f} GB (storage.ebs_gb_per_node) as the bill prices them: "
            f"give each at least {shard:,.0f} GB (plus the system), keep fewer checkpoints, or "
            "write them to s3"
        )
        return (note,)
    if ck.target != "fsx" or ck.size_gb <= 0:
        # A dataset read from the file system still has to fit on it.
        if data.source == "fsx" and 0 < st.fsx_capacity_gb < data.dataset_gb:
            note = (
                f"the {data.dataset_gb:,.0f} GB dataset does not fit on the "
                f"{st.fsx_capacity_gb:,.0f} GB FSx file system the bill prices "
                f"(storage.fsx_capacity_gb): give it at least {data.dataset_gb:,.0f} GB"
            )
            return (note,)
        return ()
    if st.fsx_capacity_gb <= 0:
        return ()
    kept = ck.size_gb * ck.keep_last
    on_it = data.dataset_gb if data.source == "fsx" else 0.0
    if kept + on_it <= st.fsx_capacity_gb:
        return ()
    dataset = f" and the {on_it:,.0f} GB dataset" if on_it else ""
    note = (
        f"checkpoint.keep_last = {ck.keep_last} checkpoints of {ck.size_gb:,.0f} GB "
        f"({kept:,.0f} GB){dataset} do not fit on the {st.fsx_capacity_gb:,.0f} GB FSx file "
        "system the bill prices (storage.fsx_capacity_gb): give it at least "
        f"{kept + on_it:,.0f} GB, keep fewer checkpoints, or write them to s3"
    )
    return (note,)


def _lustre_product(catalog: Catalog, provider: str) -> str:
    spec = catalog.value(f"services.{provider}.shared_fs")
    assert isinstance(spec, Mapping)
    return str(spec["product"])


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
        rate = min(rate, fsx_throughput_mbps(d.catalog, to.fsx_gib, to.fsx_tier) / 1000.0)
    elif to.target == "ebs":
        rate = min(rate, to.ebs_mibps * _MIB / 1e9 * nodes)
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
    if stall_hours > 0 and per_hour > 0:
        mtbf = 1.0 / per_hour
        young = young_daly_interval_hours(stall_hours, mtbf)
        optimum = min(max(young, floor_hours), float(cap.value))
        words = (
            f"Young/Daly optimum sqrt(2 × {stall_hours * 3600:,.3g} s write stall × {mtbf:,.3g} h "
            f"cluster MTBF) = {young:.3g} h"
        )
        if young < floor_hours:
            words += (
                f", raised to {floor_hours:.3g} h (one step, or persisting the previous snapshot)"
            )
        elif young > float(cap.value):
            words += f", capped at {cap.key} = {cap.value} h"
    if given is not None:
        basis = f"{given:g} h stated in the plan" + (
            f"; {words} → {optimum:.3g} h" if optimum is not None else ""
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
        f"checkpoint.interval_hours = {optimum:.3g} h: {words} (Young, CACM 17(9) 1974; Daly, "
        "FGCS 22(3) 2006; MTBF from reliability.gpu_failure_rate_per_gpu_day and spot reclaims, "
        "write stall from the checkpoint rule)"
    )
    if optimum == float(cap.value):
        d.used.append(cap.cite())
    return optimum, optimum, f"{optimum:.3g} h: {words}"


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
    if lay is None or lay.busy_s <= 0:
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
