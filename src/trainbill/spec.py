"""Plan: what the user intends to run, validated at the edge.

A plan comes from a TOML file, from CLI flags, or from a JSON body (web API); all three go
through ``plan_from_dict`` so they share one schema and one set of error messages. Fields left
out stay ``None`` here and are filled from the catalog's ``assumptions.toml`` when usage is
worked out, so every default is data with a source (and the output says which were assumed).

Sections: ``run, model, cluster, purchase, prices, storage, data, checkpoint, evaluation,
network, monitoring, reliability``. Unknown keys are errors (a typo must not silently become a
default).
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from trainbill.errors import (
    SpecError,
    is_unicode_text,
    not_unicode_message,
    suggest,
    too_deep_message,
    unreadable_value_message,
)

__all__ = [
    "MAX_COST_USD",
    "MAX_GPUS",
    "MAX_HOURS",
    "MAX_NODES",
    "MAX_PARAMS",
    "MAX_TOKENS",
    "MAX_USD_PER_GPU_HOUR",
    "MIN_USD_PER_GPU_HOUR",
    "ORCHESTRATORS",
    "PLAN_CAPS",
    "SELF_MANAGED",
    "Cap",
    "CheckpointSection",
    "ClusterSection",
    "DataSection",
    "EvaluationSection",
    "ExtraGroup",
    "ModelSection",
    "MonitoringSection",
    "NetworkSection",
    "Plan",
    "PricesSection",
    "PurchaseSection",
    "ReliabilitySection",
    "RunSection",
    "StorageSection",
    "WhatIf",
    "load_plan",
    "merge_plan_dicts",
    "orchestrator_on",
    "plan_from_dict",
    "plan_from_toml",
    "plan_to_toml",
    "read_plan_toml",
]

Provider = Literal["aws", "gcp", "azure"]
Orchestrator = Literal["ec2", "vm", "hyperpod", "eks"]
#: Orchestrators each provider offers, self-managed VMs first. HyperPod and EKS are AWS
#: services, so a GCP or Azure plan naming them is an error, not an AWS fee on a GCP bill.
#: Self-managed VMs are called "ec2" on AWS and "vm" elsewhere; either name is accepted on any
#: provider and stored as that provider's name, so old plans and exports keep working.
ORCHESTRATORS: dict[str, tuple[str, ...]] = {
    "aws": ("ec2", "hyperpod", "eks"),
    "gcp": ("vm",),
    "azure": ("vm",),
}
#: The two names of self-managed VMs (no managed training service).
SELF_MANAGED = ("ec2", "vm")


def orchestrator_on(provider: str, name: str) -> str:
    """``name`` as ``provider`` calls it: self-managed VMs are "ec2" on AWS and "vm" elsewhere;
    other names are returned as given (whether the provider offers them is the caller's check)."""
    offered = ORCHESTRATORS.get(provider)
    return offered[0] if offered is not None and name in SELF_MANAGED else name


Precision = Literal["bf16", "fp8"]
SavingsPlan = Literal["none", "1yr", "3yr"]
#: AWS Savings Plan kinds (AWS Savings Plans user guide, "Savings Plans types"): Compute covers
#: EC2 of any family in any region (Trainium included); EC2 Instance covers one instance family
#: in one region at a deeper discount; SageMaker covers only SageMaker ``ml.*`` usage (HyperPod).
SavingsPlanKind = Literal["compute", "ec2-instance", "sagemaker"]
#: Whose commitment covers the run: one the organisation already holds (its cost is sunk or
#: shared, the run is charged the commitment rate) or one bought for this run (charged its
#: whole term, the unused part as its own line).
Commitment = Literal["existing", "buy"]
DataLocation = Literal["same_az", "cross_az", "cross_region"]
#: Where the training data lives. ``s3``/``fsx``/``ebs`` name the AWS services and, on GCP and
#: Azure, that cloud's counterpart (Cloud Storage / Blob; managed Lustre or Filestore; persistent
#: or managed disks), as ``checkpoint.target`` does. ``other_cloud``: object storage in another
#: provider (``data.provider``), read over the internet; ``on_premises``: your own data centre.
DataSource = Literal["s3", "fsx", "ebs", "other_cloud", "on_premises"]
CheckpointTarget = Literal["s3", "fsx", "ebs"]
FsxTier = Literal[
    "scratch_2", "persistent_125", "persistent_250", "persistent_500", "persistent_1000"
]


# Sanity bounds on plan numbers, far beyond any real run, so that a typo (``1e308``, an extra
# zero run amok) is an error naming the field instead of an overflow or a $1e300 bill. For
# scale: Llama 3 405B trained 3.8e25 FLOPs on 15.6e12 tokens with 16,384 GPUs in ~54 days.
MAX_HOURS = 1e6  # about 114 years of training
MAX_PARAMS = 1e15  # 2,500 x Llama 3 405B
MAX_TOKENS = 1e17  # 6,400 x Llama 3's 15.6T tokens
MAX_NODES = 100_000
MAX_GPUS = 1_000_000
MAX_COST_USD = 1e12  # a trillion dollars: 1,000 x the largest training budgets reported
MIN_USD_PER_GPU_HOUR = 1e-3  # a tenth of a cent: below any cloud's price by orders of magnitude
MAX_USD_PER_GPU_HOUR = 1e4  # 100 x the dearest on-demand GPU-hour in the catalog
_EXABYTE_GB = 1e9
_SANITY_BOUND = 100_000  # upper bounds from here up are sanity caps, not rules of the field


@dataclass(frozen=True, slots=True)
class Cap:
    """The largest value a plan field accepts, and why no real run comes near it."""

    high: float
    why: str


#: THE table of upper bounds on every numeric plan field (``section.field``; extra groups as
#: ``cluster.extra_groups.count``). The schema below takes each ``le=`` from here, so files,
#: CLI flags and web request bodies (all through ``plan_from_dict``) share one set of caps and
#: one error text naming the field and its allowed range. Shares (0-1) are bounded by meaning;
#: the rest sit orders of magnitude above the largest runs reported, so only typos hit them.
#: The ``why`` is printed with the error. Figures the reasons lean on: Llama 3 405B (Dubey et
#: al. 2024, "The Llama 3 Herd of Models": 126 layers, model dimension 16,384, 16,384 H100s,
#: 419 unexpected interruptions in 54 days, i.e. ~5e-4 per GPU-day); Llama 4 Scout's 10M-token
#: context (Meta, "The Llama 4 herd", 2025-04-05); the largest EBS volume, io2 Block Express,
#: 64 TiB, 256,000 IOPS, 4,000 MiB/s (Amazon EBS User Guide, "Amazon EBS volume types"); the
#: largest Azure block blob, ~190.7 TiB (Azure Storage "Scalability and performance targets");
#: p5.48xlarge's 3,200 Gbps of EFA networking (AWS, "Amazon EC2 P5 Instances").
PLAN_CAPS: Mapping[str, Cap] = MappingProxyType(
    {
        "run.hours": Cap(MAX_HOURS, "about 114 years of training"),
        "run.deadline_hours": Cap(MAX_HOURS, "about 114 years"),
        "model.params": Cap(MAX_PARAMS, "2,500 x Llama 3 405B"),
        "model.active_params": Cap(MAX_PARAMS, "2,500 x Llama 3 405B"),
        "model.tokens": Cap(MAX_TOKENS, "6,400 x Llama 3's 15.6T training tokens"),
        "model.seq_len": Cap(100_000_000, "10 x the longest context window announced, 10M tokens"),
        "model.global_batch_tokens": Cap(
            MAX_TOKENS, "a batch cannot hold more than the largest token budget"
        ),
        "model.layers": Cap(100_000, "about 800 x Llama 3 405B's 126 layers"),
        "model.d_model": Cap(10_000_000, "about 600 x Llama 3 405B's 16,384"),
        "cluster.nodes": Cap(MAX_NODES, "about 50 x Llama 3 405B's 2,048 eight-GPU nodes"),
        "cluster.gpus": Cap(MAX_GPUS, "about 60 x Llama 3 405B's 16,384 GPUs"),
        "cluster.extra_groups.count": Cap(MAX_NODES, "the cap on cluster.nodes"),
        "purchase.spot_fraction": Cap(1.0, "a share of the nodes"),
        "purchase.savings_plan_coverage": Cap(1.0, "a share of the compute"),
        "storage.ebs_gb_per_node": Cap(
            1e6, "a petabyte per node, about 14 x the largest EBS volume (64 TiB)"
        ),
        "storage.ebs_iops": Cap(1e7, "about 40 x the largest EBS volume's 256,000 IOPS"),
        "storage.ebs_throughput_mibps": Cap(
            1e6, "about 1 TiB/s per node, 250 x the fastest EBS volume"
        ),
        "storage.fsx_capacity_gb": Cap(_EXABYTE_GB, "an exabyte"),
        "data.dataset_gb": Cap(_EXABYTE_GB, "an exabyte"),
        "data.epochs": Cap(1e6, "a million passes; LLMs make 1-4, vision models a few hundred"),
        "data.object_mb": Cap(
            _EXABYTE_GB,
            "a petabyte per object, about 5 x the largest blob any of the three clouds stores",
        ),
        "checkpoint.interval_hours": Cap(MAX_HOURS, "about 114 years"),
        "checkpoint.bytes_per_param": Cap(
            1_000, "over 60 x the 16 bytes of mixed-precision Adam state"
        ),
        "checkpoint.size_gb": Cap(_EXABYTE_GB, "an exabyte"),
        "checkpoint.keep_last": Cap(1_000_000, "a million checkpoints"),
        "checkpoint.retention_days": Cap(36_525, "a century"),
        "checkpoint.write_gbytes_per_s_per_node": Cap(
            10_000, "25 x a p5 node's whole 3,200 Gbps (400 GB/s) network"
        ),
        "evaluation.interval_steps": Cap(
            1e9, "a billion steps, about 32 years at one step a second"
        ),
        "evaluation.steps": Cap(1e9, "a billion steps, about 32 years at one step a second"),
        "network.nat_gateways": Cap(
            MAX_NODES, "one per node of the largest cluster; one gateway serves a whole zone"
        ),
        "network.nat_gb_per_node_hour": Cap(
            1e7, "about 7 x a p5 node's whole 3,200 Gbps network for an hour"
        ),
        "network.public_ips_per_node": Cap(
            1_000, "far beyond any instance's network-interface limit"
        ),
        "monitoring.custom_metrics_per_node": Cap(1e7, "ten million metric series from every node"),
        "monitoring.logs_gb_per_node_hour": Cap(10_000, "2.8 GB/s of logs from every node"),
        "reliability.gpu_failure_rate_per_gpu_day": Cap(
            24.0, "every GPU failing every hour; measured rates are near 5e-4"
        ),
        "reliability.spot_reclaim_rate_per_node_hour": Cap(
            1.0, "every spot node reclaimed every hour"
        ),
        "reliability.restart_hours": Cap(8_766, "a year to recover from one failure"),
        "reliability.straggler_cv": Cap(1.0, "a spread as large as the step time itself"),
    }
)


def _cap(path: str) -> float:
    """The ``le=`` bound of a plan field, from ``PLAN_CAPS`` (a missing entry fails at import)."""
    return PLAN_CAPS[path].high


class _Section(BaseModel):
    # ``allow_inf_nan=False``: ``hours = "inf"`` or ``nan`` is not a number of hours (pydantic
    # would accept it, and ``inf`` passes ``gt=0``), so the bill would read "$inf".
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_as_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """Lax mode reads ``true`` as 1 for a number field (``nodes = true`` priced one node):
        a boolean is only accepted where the field itself is a boolean."""
        annotation = (
            cls.model_fields[info.field_name].annotation if info.field_name is not None else None
        )
        kinds = (annotation, *get_args(annotation))
        if isinstance(value, bool) and info.field_name is not None:
            if annotation is not bool and bool not in get_args(annotation):
                msg = f"expected a number or text, not the boolean {str(value).lower()}"
                raise ValueError(msg)
        elif bool in kinds and value is not None:
            # Lax mode read "yes", "off", 0 and 1 as booleans: a switch is true or false.
            msg = f"expected true or false, not {value!r}"
            raise ValueError(msg)
        if date in kinds and isinstance(value, int | float) and not isinstance(value, bool):
            # Lax mode read a number as seconds since 1970: run.date = 0 became 1970-01-01.
            msg = f"expected a date like 2026-01-15, not the number {value!r}"
            raise ValueError(msg)
        if isinstance(value, str) and not is_unicode_text(value):
            # JSON may spell half a UTF-16 pair (``"\\ud800"``); printing it crashed the CLI.
            raise ValueError(not_unicode_message(value))
        return value


class RunSection(_Section):
    """Name, hours of pure training (or derive them from [model]), an optional deadline, and the
    day the run happens.

    ``date`` is the run's software date: how mature the kernels and frameworks for its chip
    were (the time model's maturity factor). It is apart from ``[prices] as_of`` so a past run
    can be back-tested on its own software at another day's prices; left out, it is the price
    date, else today.
    """

    name: str = "training-run"
    hours: float | None = Field(default=None, gt=0, le=_cap("run.hours"))
    deadline_hours: float | None = Field(default=None, gt=0, le=_cap("run.deadline_hours"))
    date: dt.date | None = None


class ModelSection(_Section):
    """The network being trained: size, tokens, precision, shape."""

    # Counts: at least one parameter and one token (``1e-300`` parameters is a typo).
    params: float | None = Field(default=None, ge=1, le=_cap("model.params"))
    active_params: float | None = Field(default=None, ge=1, le=_cap("model.active_params"))
    tokens: float | None = Field(default=None, ge=1, le=_cap("model.tokens"))
    precision: Precision = "bf16"
    seq_len: int | None = Field(default=None, gt=0, le=_cap("model.seq_len"))
    global_batch_tokens: float | None = Field(
        default=None, ge=1, le=_cap("model.global_batch_tokens")
    )
    layers: int | None = Field(default=None, gt=0, le=_cap("model.layers"))
    d_model: int | None = Field(default=None, gt=0, le=_cap("model.d_model"))

    @model_validator(mode="after")
    def _active_le_total(self) -> ModelSection:
        if (
            self.active_params is not None
            and self.params is not None
            and self.active_params > self.params
        ):
            msg = f"active_params ({self.active_params:g}) cannot exceed params ({self.params:g})"
            raise ValueError(msg)
        return self


class ExtraGroup(_Section):
    """A further instance group billed next to the GPU workers (e.g. a CPU head node).

    Imported clusters (HyperPod, SkyPilot, Terraform) often have one; it is priced as its own
    compute line for the whole wall-clock (``trainbill.costs.extra_groups``).
    """

    name: str = "extra"
    instance: str
    count: int = Field(default=1, gt=0, le=_cap("cluster.extra_groups.count"))
    spot: bool = False


class ClusterSection(_Section):
    """Where and on what: provider, region, instance type and node count (or GPU + count)."""

    provider: Provider = "aws"
    region: str | None = None
    instance: str | None = None
    nodes: int | None = Field(default=None, gt=0, le=_cap("cluster.nodes"))
    gpu: str | None = None
    gpus: int | None = Field(default=None, gt=0, le=_cap("cluster.gpus"))
    orchestrator: Orchestrator = Field(default=None, validate_default=True)
    #: Availability zone: an AWS AZ ID (``use1-az4``, the same place in every account) or AZ name
    #: (``us-east-1a``), a GCP zone (``us-central1-a``) or an Azure zone number (``"1"``). Checked
    #: against the region's zones in the catalog when usage is worked out.
    zone: str | None = Field(default=None, min_length=1, max_length=64)
    extra_groups: tuple[ExtraGroup, ...] = ()

    @field_validator("orchestrator", mode="before")
    @classmethod
    def _orchestrator_for_provider(cls, value: Any, info: ValidationInfo) -> Any:
        """Default and alias resolution by provider (``provider`` is validated first)."""
        provider = str(info.data.get("provider", "aws"))
        offered = ORCHESTRATORS.get(provider)
        if offered is None:  # the provider itself was invalid; that error is reported
            return "ec2" if value is None else value
        if value is None:
            return offered[0]
        if not isinstance(value, str):
            return value
        value = orchestrator_on(provider, value)
        if value not in offered and value in ORCHESTRATORS["aws"]:
            msg = (
                f"{value!r} is an AWS service, not offered on {provider}; allowed values for "
                f"{provider}: {', '.join(offered)}"
            )
            raise ValueError(msg)
        return value


class PurchaseSection(_Section):
    """How the instance-hours are bought."""

    spot_fraction: float = Field(default=0.0, ge=0, le=_cap("purchase.spot_fraction"))
    savings_plan: SavingsPlan = "none"
    savings_plan_coverage: float | None = Field(
        default=None, ge=0, le=_cap("purchase.savings_plan_coverage")
    )
    #: Default: "sagemaker" under HyperPod, else "compute" (AWS only; see ``trainbill.usage``).
    savings_plan_kind: SavingsPlanKind | None = None
    #: The family an EC2 Instance Savings Plan was bought for (e.g. "p5"); default: the plan's.
    savings_plan_family: str | None = None
    #: Default "buy": a forecast never assumes someone else already paid for the commitment.
    commitment: Commitment | None = None


class PricesSection(_Section):
    """Which dated price points to use (default: the newest on or before today)."""

    as_of: date | None = None


class StorageSection(_Section):
    """Per-node EBS and an optional shared FSx for Lustre file system."""

    ebs_gb_per_node: float | None = Field(default=None, ge=0, le=_cap("storage.ebs_gb_per_node"))
    ebs_iops: float | None = Field(default=None, ge=0, le=_cap("storage.ebs_iops"))
    ebs_throughput_mibps: float | None = Field(
        default=None, ge=0, le=_cap("storage.ebs_throughput_mibps")
    )
    fsx_capacity_gb: float | None = Field(default=None, ge=0, le=_cap("storage.fsx_capacity_gb"))
    fsx_tier: FsxTier | None = None


class DataSection(_Section):
    """The training data: size, where it lives, how often it is read.

    ``source`` says which service holds it; for data in the cluster's own cloud, ``location``
    (or the explicit ``zone``/``region`` of the file system or bucket) says where it sits
    relative to the cluster; ``other_cloud`` data names its ``provider`` (and ``region``).
    """

    dataset_gb: float | None = Field(default=None, ge=0, le=_cap("data.dataset_gb"))
    source: DataSource | None = None
    location: DataLocation | None = None
    zone: str | None = Field(default=None, min_length=1, max_length=64)
    region: str | None = Field(default=None, min_length=1, max_length=64)
    provider: Provider | None = None
    epochs: float | None = Field(default=None, gt=0, le=_cap("data.epochs"))
    object_mb: float | None = Field(default=None, gt=0, le=_cap("data.object_mb"))

    @model_validator(mode="after")
    def _fields_fit_source(self) -> DataSection:
        """Each placement field means something for some sources only: refuse the others
        rather than ignore them (a zone for S3, which is regional, is a misunderstanding)."""
        src = self.source
        if self.provider is not None and src != "other_cloud":
            msg = 'provider names the cloud holding the data; it needs source = "other_cloud"'
            raise ValueError(msg)
        if src == "other_cloud" and self.provider is None:
            msg = (
                'source = "other_cloud" needs provider = "aws", "gcp" or "azure" (the cloud '
                "holding the data)"
            )
            raise ValueError(msg)
        if src in ("other_cloud", "on_premises") and (
            self.location is not None or self.zone is not None
        ):
            msg = (
                "location and zone place data inside the cluster's cloud; not used with source "
                f"= {src!r}"
            )
            raise ValueError(msg)
        if src == "on_premises" and self.region is not None:
            msg = 'region is not used with source = "on_premises"'
            raise ValueError(msg)
        if self.zone is not None and src not in ("fsx", "ebs"):
            msg = (
                f"zone applies to fsx or ebs data (a file system or volume lives in one zone); "
                f"object storage (source = {src or 's3'!r}) is regional"
            )
            raise ValueError(msg)
        return self


class CheckpointSection(_Section):
    """Checkpoint cadence, size and destination."""

    interval_hours: float | None = Field(default=None, gt=0, le=_cap("checkpoint.interval_hours"))
    bytes_per_param: float | None = Field(default=None, gt=0, le=_cap("checkpoint.bytes_per_param"))
    size_gb: float | None = Field(default=None, gt=0, le=_cap("checkpoint.size_gb"))
    target: CheckpointTarget | None = None
    keep_last: int | None = Field(default=None, ge=1, le=_cap("checkpoint.keep_last"))
    retention_days: float | None = Field(default=None, ge=0, le=_cap("checkpoint.retention_days"))
    write_gbytes_per_s_per_node: float | None = Field(
        default=None, gt=0, le=_cap("checkpoint.write_gbytes_per_s_per_node")
    )
    asynchronous: bool | None = None


class EvaluationSection(_Section):
    """Validation passes during training: every ``interval_steps`` steps, ``steps`` forward-only
    steps at the training batch size (``interval_steps = 0``: no evaluation)."""

    interval_steps: int | None = Field(default=None, ge=0, le=_cap("evaluation.interval_steps"))
    steps: int | None = Field(default=None, ge=1, le=_cap("evaluation.steps"))


class NetworkSection(_Section):
    """NAT gateways and public IPv4 addresses."""

    nat_gateways: int | None = Field(default=None, ge=0, le=_cap("network.nat_gateways"))
    nat_gb_per_node_hour: float | None = Field(
        default=None, ge=0, le=_cap("network.nat_gb_per_node_hour")
    )
    s3_via_nat: bool | None = None
    public_ips_per_node: float | None = Field(
        default=None, ge=0, le=_cap("network.public_ips_per_node")
    )


class MonitoringSection(_Section):
    """CloudWatch metrics and logs."""

    custom_metrics_per_node: float | None = Field(
        default=None, ge=0, le=_cap("monitoring.custom_metrics_per_node")
    )
    logs_gb_per_node_hour: float | None = Field(
        default=None, ge=0, le=_cap("monitoring.logs_gb_per_node_hour")
    )


class ReliabilitySection(_Section):
    """Failure and reclaim rates, restart time and straggler spread."""

    gpu_failure_rate_per_gpu_day: float | None = Field(
        default=None, ge=0, le=_cap("reliability.gpu_failure_rate_per_gpu_day")
    )
    spot_reclaim_rate_per_node_hour: float | None = Field(
        default=None, ge=0, le=_cap("reliability.spot_reclaim_rate_per_node_hour")
    )
    restart_hours: float | None = Field(default=None, ge=0, le=_cap("reliability.restart_hours"))
    straggler_cv: float | None = Field(default=None, ge=0, le=_cap("reliability.straggler_cv"))


@dataclass(frozen=True, slots=True)
class WhatIf:
    """What a what-if (``trainbill.whatif``) did to a plan that its fields cannot say.

    The sparse-attention what-if cuts ``run.hours`` by the FLOPs it skips; ``flops_saving`` (the
    share of the model's FLOPs no longer performed) lets the forecast report MFU on the FLOPs
    actually performed, and ``notes`` become forecast warnings of kind ``whatif`` so every output
    says the what-if was applied. Not part of the plan file: a plan read from TOML has none.
    """

    flops_saving: float = 0.0
    notes: tuple[str, ...] = ()


class Plan(_Section):
    """A whole training plan. Immutable; derive variants with ``model_copy(update=...)``.

    ``whatif`` travels with every ``model_copy`` (a private attribute, outside the schema and the
    plan file), so a what-if plan's variants (headline actions, sizing sweeps) keep it.
    """

    _whatif: WhatIf = PrivateAttr(default_factory=WhatIf)

    run: RunSection = RunSection()
    model: ModelSection = ModelSection()
    cluster: ClusterSection = ClusterSection()
    purchase: PurchaseSection = PurchaseSection()
    prices: PricesSection = PricesSection()
    storage: StorageSection = StorageSection()
    data: DataSection = DataSection()
    checkpoint: CheckpointSection = CheckpointSection()
    evaluation: EvaluationSection = EvaluationSection()
    network: NetworkSection = NetworkSection()
    monitoring: MonitoringSection = MonitoringSection()
    reliability: ReliabilitySection = ReliabilitySection()

    @model_validator(mode="after")
    def _enough_to_price(self) -> Plan:
        c = self.cluster
        if c.instance is None and c.gpu is None:
            msg = (
                'cluster needs an instance (e.g. instance = "p5.48xlarge") or a gpu (e.g. gpu = '
                '"h100")'
            )
            raise ValueError(msg)
        if c.nodes is None and c.gpus is None:
            msg = "cluster needs nodes (instance count) or gpus (accelerator count)"
            raise ValueError(msg)
        if self.run.hours is None and (self.model.params is None or self.model.tokens is None):
            msg = "give run.hours, or model.params and model.tokens so the hours can be derived"
            raise ValueError(msg)
        return self

    @property
    def whatif(self) -> WhatIf:
        """What a what-if applied to this plan (nothing for a plan as written)."""
        return self._whatif

    def with_whatif(self, whatif: WhatIf) -> Plan:
        """A copy of the plan carrying ``whatif``."""
        new = self.model_copy()
        new._whatif = whatif
        return new


_SECTIONS: Mapping[str, type[_Section]] = {
    name: field.annotation  # type: ignore[misc]
    for name, field in Plan.model_fields.items()
}


def _describe(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc)


def _allowed_keys(loc: tuple[int | str, ...]) -> list[str]:
    if len(loc) == 1:
        return list(Plan.model_fields)
    section = _SECTIONS.get(str(loc[0]))
    return list(section.model_fields) if section else []


def _fields() -> dict[str, Any]:
    """``section.field`` (``cluster.extra_groups.count`` for extra groups) → its pydantic
    FieldInfo."""
    out: dict[str, Any] = {}
    for name, section in _SECTIONS.items():
        out.update({f"{name}.{f}": info for f, info in section.model_fields.items()})
    out.update({f"cluster.extra_groups.{f}": info for f, info in ExtraGroup.model_fields.items()})
    return out


_FIELDS = _fields()


def _num(x: float) -> str:
    """1,000,000 or 1e+15 or 0.5, never 1000000000000000."""
    if float(x).is_integer() and abs(x) < 1e7:
        return f"{int(x):,}"
    return f"{x:.3g}"


def _allowed_range(path: str) -> str:
    """``0 to 1e+09 (an exabyte)`` for a bounded field, from its constraints and
    ``PLAN_CAPS``; empty when the field has no numeric bounds."""
    info = _FIELDS.get(path)
    if info is None:
        return ""
    bounds: dict[str, float] = {}
    for meta in info.metadata:
        for name in ("ge", "gt", "le", "lt"):
            value = getattr(meta, name, None)
            if isinstance(value, int | float):
                bounds[name] = value
    low = (
        f"{_num(bounds['ge'])} to "
        if "ge" in bounds
        else f"above {_num(bounds['gt'])}, up to "
        if "gt" in bounds
        else "up to "
    )
    if "le" not in bounds:
        return ""
    cap = PLAN_CAPS.get(path)
    why = f" ({cap.why})" if cap is not None and cap.high >= _SANITY_BOUND else ""
    return f"{low}{_num(bounds['le'])}{why}"


def _shown(value: Any) -> str:
    """The offending value as typed, cut short: a 400-digit integer must not fill the screen."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-4:]}, {len(text)} characters"


def _format_error(err: Mapping[str, Any]) -> tuple[str, str]:
    loc = tuple(err.get("loc", ()))
    field = _describe(loc) or "plan"
    kind = err.get("type", "")
    got = _shown(err.get("input"))
    if kind == "extra_forbidden":
        keys = _allowed_keys(loc)
        last = str(loc[-1]) if loc else ""
        return field, f"unknown key.{suggest(last, keys)} Allowed: {', '.join(keys)}"
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return field, f"{got} is not allowed; allowed values: {expected}"
    allowed = _allowed_range(".".join(str(p) for p in loc if not isinstance(p, int)))
    allowed = f"; allowed: {allowed}" if allowed else ""
    if kind in {"less_than_equal", "less_than"}:
        bound = err.get("ctx", {}).get("le", err.get("ctx", {}).get("lt"))
        if isinstance(bound, int | float):
            op = "at most" if kind == "less_than_equal" else "below"
            if abs(bound) < _SANITY_BOUND:
                return field, f"must be {op} {_num(bound)}{allowed} (got {got})"
            return (
                field,
                (
                    f"must be {op} {_num(bound)}: too large for any real run, a typo? (got "
                    f"{got}{allowed})"
                ),
            )
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind in {"greater_than", "greater_than_equal"}:
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind.endswith(("_parsing", "_type")):
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind == "value_error":
        message = str(err["msg"]).removeprefix("Value error, ")
        return field if loc else "plan", message
    return field, f"{err['msg']}{allowed} (got {got})"


def plan_from_dict(data: Mapping[str, Any], *, source: str = "plan") -> Plan:
    """Validate a plan mapping; raise ``SpecError`` naming the source, field and allowed values."""
    try:
        return Plan.model_validate(dict(data))
    except ValidationError as exc:
        errors = exc.errors()
        field, message = _format_error(errors[0])
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise SpecError(message + more, source=source, field=field) from None


def load_plan(path: Path | str) -> Plan:
    """Read and validate a plan TOML file. Malformed TOML reports line and column."""
    p = Path(path)
    try:
        # utf-8-sig: Windows editors start files with a byte-order mark, which TOML forbids.
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        msg = "file not found"
        raise SpecError(msg, source=str(p)) from None
    except UnicodeDecodeError as exc:
        msg = (
            f"not UTF-8 text (byte {exc.start}: {exc.object[exc.start : exc.start + 1]!r}); save "
            "the plan as UTF-8"
        )
        raise SpecError(msg, source=str(p)) from None
    except (IsADirectoryError, PermissionError) as exc:
        msg = f"cannot read plan file: {exc.strerror or exc.__class__.__name__}"
        raise SpecError(msg, source=str(p)) from None
    return plan_from_toml(text, source=str(p))


def read_plan_toml(text: str, *, source: str = "plan") -> dict[str, Any]:
    """Parse plan TOML text into a mapping (not yet validated); ``SpecError`` names the source
    and the line and column of malformed TOML. The web calculator's upload reads files here,
    so a file and an upload get the same messages."""
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        msg = f"invalid TOML: {exc}"
        raise SpecError(msg, source=source) from None
    except ValueError as exc:  # parsed, but a value cannot be built (a 5,000-digit integer)
        raise SpecError(f"invalid TOML: {unreadable_value_message(exc)}", source=source) from None
    except RecursionError:  # tomllib recurses per nesting level
        raise SpecError(too_deep_message(), source=source) from None


def plan_from_toml(text: str, *, source: str = "plan") -> Plan:
    """Parse and validate plan TOML text (a file's contents, an upload)."""
    data = read_plan_toml(text, source=source)
    try:
        return plan_from_dict(data, source=source)
    except RecursionError:  # pydantic recurses per nesting level
        raise SpecError(too_deep_message(), source=source) from None


def _toml_value(v: Any) -> str:
    """A TOML literal: every control character escaped, so a name with a newline or a quote
    cannot break out of its string (the web page writes plans whose names came from a URL)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, date):
        return v.isoformat()
    text = str(v).replace("\\", "\\\\").replace('"', '\\"')
    text = "".join(f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch for ch in text)
    return f'"{text}"'


def plan_to_toml(plan: Plan, *, header: str = "") -> str:
    """Serialise a plan as TOML that ``load_plan`` reads back to an equal plan."""
    data = plan.model_dump(exclude_none=True)
    lines = [f"# {h}" if h else "#" for h in header.splitlines()] if header else []
    for section, values in data.items():
        scalars = {k: v for k, v in values.items() if not isinstance(v, list | tuple | dict)}
        groups = {
            k: v
            for k, v in values.items()
            if isinstance(v, list | tuple) and v and isinstance(v[0], dict)
        }
        if scalars:
            lines += ["", f"[{section}]"] + [f"{k} = {_toml_value(v)}" for k, v in scalars.items()]
        for key, items in groups.items():
            for item in items:
                lines += ["", f"[[{section}.{key}]]"]
                lines += [f"{k} = {_toml_value(v)}" for k, v in item.items() if v is not None]
    return "\n".join(lines).lstrip("\n") + "\n"


def merge_plan_dicts(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge two plan mappings section by section; ``override`` wins (flags over file)."""
    out: dict[str, Any] = {k: dict(v) if isinstance(v, Mapping) else v for k, v in base.items()}
    for key, val in override.items():
        if isinstance(val, Mapping) and isinstance(out.get(key), dict):
            out[key].update(val)
        else:
            out[key] = dict(val) if isinstance(val, Mapping) else val
    return out
