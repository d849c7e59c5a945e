"""Usage: how much a plan consumes (node-hours, GB-months, GB moved, restarts), not what it costs.

Splitting usage from price is what lets the Monte Carlo (``trainbill.simulate``) perturb only
the quantities (how many failures, how many hours lost) and price every trial with the very
same cost drivers as the deterministic forecast. ``usage_for`` resolves every value a plan left
out from the catalog's assumptions and records the citation in ``assumed`` so the output can
say what was assumed and on whose authority. ``usage_for`` is one named step per record of the
``Usage`` (compute, checkpoint, evaluation, reliability, storage, data, network, monitoring,
purchase), after ``resolve_job`` has settled the context.
"""

from trainbill.timemodel import estimate_time as estimate_time
from trainbill.usage.assemble import usage_for
from trainbill.usage.cluster import (
    check_region,
    hyperpod_spot_from,
    hyperpod_spot_note,
    hyperpod_unpriced,
    instance_family,
    nearest_slice,
    resolve_cluster,
    resolve_zone,
    sagemaker_price,
    tpu_slice_sizes,
)
from trainbill.usage.cluster import instance_for_gpu as instance_for_gpu
from trainbill.usage.compute import fused_attention_on as fused_attention_on
from trainbill.usage.compute import software_age_years
from trainbill.usage.interruptions import (
    Interruptions,
    failures_per_hour,
    hours_lost_per_interruption,
    reclaims_per_hour,
    young_daly_interval_hours,
)
from trainbill.usage.job import Job, resolve_job
from trainbill.usage.plan_warnings import beyond_price_data
from trainbill.usage.records import (
    Checkpoint,
    Compute,
    Data,
    Evaluation,
    Monitoring,
    Network,
    Purchase,
    Reliability,
    Storage,
    Usage,
)
from trainbill.usage.storage import (
    FSX_TIER_MBPS_PER_TIB,
    fsx_throughput_mbps,
    gp3_limits,
    lustre_gb_per_gib,
    lustre_size_gib,
)
from trainbill.usage.sweep import NodeSweep, usage_over_nodes

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
    "NodeSweep",
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
    "usage_over_nodes",
    "young_daly_interval_hours",
]
