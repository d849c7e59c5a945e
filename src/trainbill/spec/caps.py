"""The plan's vocabulary and bounds: the allowed words of each choice field, the
orchestrators per cloud, and ``PLAN_CAPS``, the one table of every numeric field's upper bound.

Plan files, flags, the web API and the planner's search space all read their limits from here,
so a number one of them accepts is never refused by another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

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


#: Training precision of the matmuls (``catalog.PRECISIONS``): each accelerator's dense peak at
#: it comes from the catalog (``Accelerator.precision_peak``).
Precision = Literal["fp32", "tf32", "fp16", "bf16", "fp8"]
#: The network's token-mixing layers: all attention (dense or MoE transformer), all selective
#: state-space scans (Mamba, Gu & Dao 2023), or a mix (Jamba, Zamba, Samba): the time model
#: counts each one's FLOPs and memory (``trainbill.architectures``).
Architecture = Literal["transformer", "state-space", "hybrid"]
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
#: Values one planner search axis may list (node counts, instances): the web API's cap and the
#: CLI's, so ``--nodes 1,...,3000`` is refused at once instead of searched for a minute.
MAX_AXIS_VALUES = 64
#: Node counts one CLI search may list: every count from 1 to 1,024, the node axis being the
#: one a sizing question sweeps densely (issue #40's ``--nodes 1,...,512`` is 512 values, about
#: 7 s over every instance of three clouds on two cores). ``--nodes 1,...,3000`` stays refused.
#: The web API keeps ``MAX_AXIS_VALUES`` (a request must not hold a worker for seconds).
MAX_NODE_AXIS_VALUES = 1024
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
        "model.attention_share": Cap(1.0, "a share of the layers"),
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
