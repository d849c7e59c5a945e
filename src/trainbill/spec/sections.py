"""The plan's sections and ``Plan`` itself: each field declared once, with the docstring
under it that the reference documentation shows (``tools/docs_reference.py`` reads this
module's source), and the rules across fields (``_check``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from datetime import date
from typing import Any, get_args

from trainbill._record import record
from trainbill.spec.caps import (
    Architecture,
    CheckpointTarget,
    Commitment,
    DataLocation,
    DataSource,
    FsxTier,
    Orchestrator,
    Precision,
    Provider,
    SavingsPlan,
    SavingsPlanKind,
    _cap,
)
from trainbill.spec.fields import _choice, _number, _Section, _spec, _sub


class RunSection(_Section):
    """Name, hours of pure training (or derive them from [model]), an optional deadline, and the
    day the run happens.

    ``date`` is the run's software date: how mature the kernels and frameworks for its chip
    were (the time model's maturity factor). It is apart from ``[prices] as_of`` so a past run
    can be back-tested on its own software at another day's prices; left out, it is the price
    date, else today.
    """

    name: str = _spec("str", "training-run", optional=False)
    """The run's name, shown in every output's title and in the report."""
    hours: float | None = _number("float", "run.hours", gt=0)
    """Wall-clock hours of pure training (no stalls, evaluation or lost work). Left out, the
    time model derives them from `[model]` params and tokens on the cluster."""
    deadline_hours: float | None = _number("float", "run.deadline_hours", gt=0)
    """The wall-clock the run must finish within: the Monte Carlo gives the odds of missing it,
    the planner searches only plans that meet it, and the advice checks its changes against it."""
    date: dt.date | None = _spec("date")
    """The day the run happens: its software maturity (how mature kernels and frameworks for its
    chip were), apart from the price date so a past run can be back-tested on its own software
    at another day's prices. Default: `prices.as_of`, else today."""


class ModelSection(_Section):
    """The network being trained: size, tokens, precision, shape."""

    # Counts: at least one parameter and one token (``1e-300`` parameters is a typo).
    params: float | None = _number("float", "model.params", ge=1)
    """Total parameters (`70e9` or `"70B"`: suffixes K, M, B, T). Sets the FLOPs, the checkpoint
    size and the bytes synchronised per step."""
    active_params: float | None = _number("float", "model.active_params", ge=1)
    """Parameters active per token, for a mixture-of-experts model (at most `params`). Default:
    `params` (a dense model)."""
    tokens: float | None = _number("float", "model.tokens", ge=1)
    """Training tokens (`1.4e12` or `"1.4T"`); with `params`, the FLOPs the run must do."""
    precision: Precision = _choice(Precision, "bf16")
    """Matmul precision: `fp8` speeds up only the matmuls, by the fitted FP8 efficiency."""
    seq_len: int | None = _number("int", "model.seq_len", gt=0)
    """Sequence length in tokens: attention FLOPs, activation memory and the layout search."""
    global_batch_tokens: float | None = _number("float", "model.global_batch_tokens", ge=1)
    """Tokens per optimizer step. Default: 2,048 tokens per GPU held within 4M and 16M tokens
    (63M for MoE), rounded to whole sequences; a stated batch always wins."""
    layers: int | None = _number("int", "model.layers", gt=0)
    """Transformer layers. With `d_model`, the model's shape; without, estimated from params =
    12·layers·d_model² with d_model/layers = 128."""
    d_model: int | None = _number("int", "model.d_model", gt=0)
    """Hidden width of the model (see `layers`)."""
    architecture: Architecture = _choice(Architecture, "transformer")
    """`transformer`, `state-space` (Mamba-style scans) or `hybrid` (attention and state-space
    layers); sets the FLOPs per token and the memory-bound share of the step."""
    attention_share: float | None = _number("float", "model.attention_share", gt=0)
    """Share of a hybrid's layers that are attention (the rest state-space). Default: the
    catalog's `time.hybrid_attention_share`. Only for `hybrid`."""

    def _check(self) -> str | None:
        if (
            self.active_params is not None
            and self.params is not None
            and self.active_params > self.params
        ):
            return f"active_params ({self.active_params:g}) cannot exceed params ({self.params:g})"
        # A transformer is all attention: a share of 1 agrees with it; any other share names a
        # hybrid, and a state-space model has no attention layers at all.
        consistent = self.architecture == "hybrid" or (
            self.architecture == "transformer" and self.attention_share == 1.0
        )
        if self.attention_share is not None and not consistent:
            return (
                f"attention_share is the attention share of a hybrid's layers; architecture is "
                f'{self.architecture!r} (give architecture = "hybrid" or drop attention_share)'
            )
        return None


class ExtraGroup(_Section):
    """A further instance group billed next to the GPU workers (e.g. a CPU head node).

    Imported clusters (HyperPod, SkyPilot, Terraform) often have one; it is priced as its own
    compute line for the whole wall-clock (``trainbill.costs.extra_groups``).
    """

    name: str = _spec("str", "extra", optional=False)
    """The group's name, shown in its ledger line."""
    instance: str = _spec("str", "", optional=False, required=True, min_length=1)
    """Instance type of the group (required)."""
    count: int = _spec("int", 1, optional=False, gt=0, le=_cap("cluster.extra_groups.count"))
    """Instances in the group."""
    spot: bool = _spec("bool", False, optional=False)
    """Whether the group runs on spot."""


class ClusterSection(_Section):
    """Where and on what: provider, region, instance type and node count (or GPU + count)."""

    provider: Provider = _choice(Provider, "aws")
    """The cloud: prices, services and regions come from its own catalog rows, never another's."""
    region: str | None = _spec("str")
    """Region, as the provider names it (`us-east-1`, `us-central1`, `eastus`). Default: the
    provider's reference region; a region the catalog does not price is priced at the reference
    region, with a warning."""
    instance: str | None = _spec("str")
    """Instance type (`p5.48xlarge`); or give `gpu` and trainbill picks the provider's largest
    instance holding it."""
    nodes: int | None = _number("int", "cluster.nodes", gt=0)
    """Instance count; or give `gpus` (rounded up to whole nodes, with a warning)."""
    gpu: str | None = _spec("str")
    """Accelerator by catalog id or a name it is sold under (`h100`, `A100`, `NVIDIA
    A100-SXM4-80GB`, `trn2`), when no `instance` is given."""
    gpus: int | None = _number("int", "cluster.gpus", gt=0)
    """Accelerator count, when no `nodes` is given."""
    orchestrator: Orchestrator = _spec("orchestrator", None, choices=get_args(Orchestrator))
    """Who runs the cluster: self-managed VMs (`ec2` on AWS, `vm` elsewhere), SageMaker HyperPod
    or EKS (AWS only). Sets the restart time after a failure and the orchestration line."""
    zone: str | None = _spec("str", min_length=1, max_length=64)
    """Availability zone: an AWS AZ ID (`use1-az4`, the same place in every account) or AZ name
    (`us-east-1a`), a GCP zone (`us-central1-a`) or an Azure zone number (`"1"`). Checked
    against the region's zones; with an AWS AZ ID, spot is that zone's price."""
    extra_groups: tuple[ExtraGroup, ...] = _spec("groups", (), optional=False, section=ExtraGroup)
    """Further instance groups billed beside the GPU workers (a CPU head node, a login node),
    each priced as its own compute line for the whole wall-clock."""


class PurchaseSection(_Section):
    """How the instance-hours are bought."""

    spot_fraction: float = _spec(
        "float", 0.0, optional=False, ge=0, le=_cap("purchase.spot_fraction")
    )
    """Share of the nodes on spot (0–1), priced at the catalog's spot price and exposed to
    reclaims."""
    savings_plan: SavingsPlan = _choice(SavingsPlan, "none")
    """Savings Plan (or committed-use discount, reservation) term covering the on-demand hours;
    priced only at a published rate."""
    savings_plan_coverage: float | None = _number("float", "purchase.savings_plan_coverage", ge=0)
    """Share of the on-demand instance-hours the commitment covers (0–1). Default: 1 when a plan
    is named."""
    savings_plan_kind: SavingsPlanKind | None = _choice(SavingsPlanKind)
    """AWS Savings Plan kind: `compute` (any EC2 family and region), `ec2-instance` (one family
    in one region, deeper discount) or `sagemaker` (SageMaker `ml.*` usage). Default:
    `sagemaker` under HyperPod, else `compute`."""
    savings_plan_family: str | None = _spec("str")
    """The instance family an EC2 Instance Savings Plan was bought for (`p5`). Default: the
    plan's own."""
    commitment: Commitment | None = _choice(Commitment)
    """Whose commitment: `buy` (bought for this run: its whole term is charged, used or not) or
    `existing` (one the organisation holds covers the run at its rate). Default: `buy`, since a
    forecast never assumes someone else paid."""


class PricesSection(_Section):
    """Which dated price points to use (default: the newest on or before today)."""

    as_of: date | None = _spec("date")
    """Price date: the catalog's price points in force that day. Default: today (then the output
    depends on the day it runs)."""


class StorageSection(_Section):
    """Per-node EBS and an optional shared FSx for Lustre file system."""

    ebs_gb_per_node: float | None = _number("float", "storage.ebs_gb_per_node", ge=0)
    """Block volume (EBS gp3 on AWS) per node, in GB."""
    ebs_iops: float | None = _number("float", "storage.ebs_iops", ge=0)
    """Provisioned IOPS per volume; above the gp3 baseline they are billed."""
    ebs_throughput_mibps: float | None = _number("float", "storage.ebs_throughput_mibps", ge=0)
    """Provisioned throughput per volume in MiB/s; above the gp3 baseline it is billed."""
    fsx_capacity_gb: float | None = _number("float", "storage.fsx_capacity_gb", ge=0)
    """Shared Lustre file system capacity (FSx for Lustre on AWS) in GiB as typed in the
    console; priced at the size the cloud creates. 0: none."""
    fsx_tier: FsxTier | None = _choice(FsxTier)
    """Lustre deployment type and throughput tier (MB/s per TiB), which sets its price and the
    checkpoint write rate."""


class DataSection(_Section):
    """The training data: size, where it lives, how often it is read.

    ``source`` says which service holds it; for data in the cluster's own cloud, ``location``
    (or the explicit ``zone``/``region`` of the file system or bucket) says where it sits
    relative to the cluster; ``other_cloud`` data names its ``provider`` (and ``region``).
    """

    dataset_gb: float | None = _number("float", "data.dataset_gb", ge=0)
    """Training data size in GB. Default: tokens × 4 bytes."""
    source: DataSource | None = _choice(DataSource)
    """Which service holds the data: object storage (`s3`; Cloud Storage or Blob elsewhere),
    `fsx`, `ebs`, another provider's object storage (`other_cloud`) or your own data centre
    (`on_premises`). Sets what transfer is charged."""
    location: DataLocation | None = _choice(DataLocation)
    """Where data in the cluster's own cloud sits relative to it; object storage is regional, so
    `cross_az` costs nothing there (a warning says so)."""
    zone: str | None = _spec("str", min_length=1, max_length=64)
    """Zone of a file system or volume holding the data (`fsx` or `ebs` only); another zone than
    the cluster's makes it `cross_az`."""
    region: str | None = _spec("str", min_length=1, max_length=64)
    """Region of the bucket or file system holding the data, when not the cluster's:
    inter-region transfer at the pair's rate."""
    provider: Provider | None = _choice(Provider)
    """The cloud holding the data, for `source = "other_cloud"`: its internet egress tiers are
    charged on its bill."""
    epochs: float | None = _number("float", "data.epochs", gt=0)
    """Reads of the whole dataset over the run."""
    object_mb: float | None = _number("float", "data.object_mb", gt=0)
    """Size of one object (shard) read per GET request, in MB."""

    def _check(self) -> str | None:
        """Each placement field means something for some sources only: refuse the others
        rather than ignore them (a zone for S3, which is regional, is a misunderstanding)."""
        src = self.source
        if self.provider is not None and src != "other_cloud":
            return 'provider names the cloud holding the data; it needs source = "other_cloud"'
        if src == "other_cloud" and self.provider is None:
            return (
                'source = "other_cloud" needs provider = "aws", "gcp" or "azure" (the cloud '
                "holding the data)"
            )
        if src in ("other_cloud", "on_premises") and (
            self.location is not None or self.zone is not None
        ):
            return (
                "location and zone place data inside the cluster's cloud; not used with source "
                f"= {src!r}"
            )
        if src == "on_premises" and self.region is not None:
            return 'region is not used with source = "on_premises"'
        if self.zone is not None and src not in ("fsx", "ebs"):
            return (
                f"zone applies to fsx or ebs data (a file system or volume lives in one zone); "
                f"object storage (source = {src or 's3'!r}) is regional"
            )
        return None


class CheckpointSection(_Section):
    """Checkpoint cadence, size and destination."""

    # At least one second: no run checkpoints more often than once a step, and a smaller value
    # (5e-324 h) only overflows the checkpoint count.
    interval_hours: float | None = _number("float", "checkpoint.interval_hours", ge=1 / 3600)
    """Hours between checkpoints. Default: Young's optimum sqrt(2 × write stall × cluster MTBF),
    at most 2 h."""
    bytes_per_param: float | None = _number("float", "checkpoint.bytes_per_param", gt=0)
    """Checkpoint bytes per parameter (bf16 weights, fp32 master weights, Adam moments)."""
    size_gb: float | None = _number("float", "checkpoint.size_gb", gt=0)
    """Checkpoint size in GB, in place of params × bytes_per_param."""
    target: CheckpointTarget | None = _choice(CheckpointTarget)
    """Where checkpoints are written: object storage, the shared file system or the node's
    volume."""
    keep_last: int | None = _number("int", "checkpoint.keep_last", ge=1)
    """Checkpoints retained (rolling); storage is charged for them."""
    retention_days: float | None = _number("float", "checkpoint.retention_days", ge=0)
    """Days retained checkpoints are stored after the run."""
    write_gbytes_per_s_per_node: float | None = _number(
        "float", "checkpoint.write_gbytes_per_s_per_node", gt=0
    )
    """Checkpoint write rate per node in GB/s, capped by the file system's or the volume's
    throughput."""
    asynchronous: bool | None = _spec("bool")
    """Whether checkpoints are written in the background: training then stalls only for the
    snapshot."""


class EvaluationSection(_Section):
    """Validation passes during training: every ``interval_steps`` steps, ``steps`` forward-only
    steps at the training batch size (``interval_steps = 0``: no evaluation)."""

    interval_steps: int | None = _number("int", "evaluation.interval_steps", ge=0)
    """Training steps between evaluations; 0 means no evaluation."""
    steps: int | None = _number("int", "evaluation.steps", ge=1)
    """Forward-only steps per evaluation, at the training batch size."""


class NetworkSection(_Section):
    """NAT gateways and public IPv4 addresses."""

    nat_gateways: int | None = _number("int", "network.nat_gateways", ge=0)
    """NAT gateways in the cluster's network, billed per hour."""
    nat_gb_per_node_hour: float | None = _number("float", "network.nat_gb_per_node_hour", ge=0)
    """GB each node sends through NAT per hour (container pulls, packages, telemetry), besides
    the dataset and checkpoint bytes that cross it."""
    s3_via_nat: bool | None = _spec("bool")
    """Whether S3 traffic crosses the NAT gateway (no gateway VPC endpoint): then dataset reads
    and checkpoints to S3 are NAT-processed GB."""
    public_ips_per_node: float | None = _number("float", "network.public_ips_per_node", ge=0)
    """Public IPv4 addresses per node, billed per address-hour (AWS since 2024-02-01)."""


class MonitoringSection(_Section):
    """CloudWatch metrics and logs."""

    custom_metrics_per_node: float | None = _number(
        "float", "monitoring.custom_metrics_per_node", ge=0
    )
    """Custom metrics each node publishes (CloudWatch metric-months, in volume tiers)."""
    logs_gb_per_node_hour: float | None = _number("float", "monitoring.logs_gb_per_node_hour", ge=0)
    """GB of logs each node ingests per hour."""


class ReliabilitySection(_Section):
    """Failure and reclaim rates, restart time and straggler spread."""

    gpu_failure_rate_per_gpu_day: float | None = _number(
        "float", "reliability.gpu_failure_rate_per_gpu_day", ge=0
    )
    """Hardware failures per GPU-day that interrupt the job. Default: Llama 3 405B's rate."""
    spot_reclaim_rate_per_node_hour: float | None = _number(
        "float", "reliability.spot_reclaim_rate_per_node_hour", ge=0
    )
    """Spot reclaims per spot node-hour. Default: from the Spot Advisor interruption bucket of
    the instance and region."""
    restart_hours: float | None = _number("float", "reliability.restart_hours", ge=0)
    """Hours to resume after a failure or reclaim. Default by orchestrator: 1 h self-managed,
    0.5 h EKS, 0.25 h HyperPod auto-resume."""
    straggler_cv: float | None = _number("float", "reliability.straggler_cv", ge=0)
    """Coefficient of variation of per-GPU step time: the slowest GPU sets each step."""


@record
class WhatIf:
    """What a what-if (``trainbill.whatif``) did to a plan that its fields cannot say.

    The sparse-attention what-if cuts the training hours by the work it skips: ``time_saving``
    is the share of the modelled (or stated) pure-training hours removed, applied where the time
    model's answer is taken (``usage``), so the hours stay the model's and keep their error band,
    and every variant of the plan (more nodes, another instance) is re-modelled before the cut.
    (It once wrote the cut hours into ``run.hours``, which made them "stated": the band and the
    P90 budget's model error vanished.) ``flops_saving`` (the share of the model's FLOPs no longer
    performed) lets the forecast report MFU on the FLOPs actually performed, and ``notes`` become
    forecast warnings of kind ``whatif`` so every output says the what-if was applied. Not part
    of the plan file: a plan read from TOML has none.
    """

    time_saving: float = 0.0
    flops_saving: float = 0.0
    notes: tuple[str, ...] = ()


class Plan(_Section):
    """A whole training plan. Immutable; derive variants with ``model_copy(update=...)``.

    ``whatif`` travels with every ``model_copy`` (outside the schema and the plan file, but part
    of equality: a what-if plan is not the plan), so its variants (headline actions, sizing
    sweeps) keep it.
    """

    run: RunSection = _sub(RunSection)
    model: ModelSection = _sub(ModelSection)
    cluster: ClusterSection = _sub(ClusterSection)
    purchase: PurchaseSection = _sub(PurchaseSection)
    prices: PricesSection = _sub(PricesSection)
    storage: StorageSection = _sub(StorageSection)
    data: DataSection = _sub(DataSection)
    checkpoint: CheckpointSection = _sub(CheckpointSection)
    evaluation: EvaluationSection = _sub(EvaluationSection)
    network: NetworkSection = _sub(NetworkSection)
    monitoring: MonitoringSection = _sub(MonitoringSection)
    reliability: ReliabilitySection = _sub(ReliabilitySection)

    def _check(self) -> str | None:
        c = self.cluster
        if c.instance is None and c.gpu is None:
            return (
                'cluster needs an instance (e.g. instance = "p5.48xlarge") or a gpu (e.g. gpu = '
                '"h100")'
            )
        if c.nodes is None and c.gpus is None:
            return "cluster needs nodes (instance count) or gpus (accelerator count)"
        if self.run.hours is None and (self.model.params is None or self.model.tokens is None):
            return "give run.hours, or model.params and model.tokens so the hours can be derived"
        return None

    def _carried(self) -> Any:
        return self.whatif

    @property
    def whatif(self) -> WhatIf:
        """What a what-if applied to this plan (nothing for a plan as written)."""
        found = self.__dict__.get("_whatif")
        return found if isinstance(found, WhatIf) else _NO_WHATIF

    def with_whatif(self, whatif: WhatIf) -> Plan:
        """A copy of the plan carrying ``whatif`` (compared with the plan, not dumped)."""
        new = self.model_copy()
        new.__dict__["_whatif"] = whatif
        return new


_NO_WHATIF = WhatIf()
_SECTIONS: Mapping[str, type[_Section]] = {
    name: spec.section for name, spec in Plan.model_fields.items() if spec.section is not None
}
