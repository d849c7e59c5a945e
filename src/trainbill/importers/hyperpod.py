"""SageMaker HyperPod: the ``--instance-groups`` list or a ``create-cluster`` input JSON.

The seed article's command passes ``[{"InstanceType":"p5.48xlarge","InstanceCount":16}]``;
``aws sagemaker create-cluster --cli-input-json`` files (and ``describe-cluster`` output) wrap
the same groups in ``{"InstanceGroups": [...]}``. HyperPod bills ``ml.``-prefixed instance
types: the prefix is stripped to find the EC2 hardware and price, and the plan's orchestrator is
``hyperpod`` so the ml.* premium and HyperPod's faster node recovery apply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from trainbill.catalog import Catalog
from trainbill.importers import ClusterImportError, ImportReport, import_error
from trainbill.importers._groups import Group, assemble, number

__all__ = ["parse"]

#: Group keys that carry no cost of their own (identity, roles, scripts, health checks).
_NO_COST_GROUP_KEYS = frozenset(
    {
        "InstanceGroupName",
        "LifeCycleConfig",
        "ExecutionRole",
        "ThreadsPerCore",
        "OnStartDeepHealthChecks",
        "OverrideVpcConfig",
        "ScheduledUpdateConfig",
        "Status",
        "TrainingPlanStatus",
    }
)
_COUNT_KEYS = ("InstanceCount", "TargetCount", "CurrentCount")
_NO_COST_TOP_KEYS = frozenset(
    {
        "ClusterName",
        "VpcConfig",
        "Tags",
        "ClusterStatus",
        "CreationTime",
        "FailureMessage",
        "NodeRecovery",
    }
)
#: The region of an AWS ARN (a HyperPod cluster's, its EKS cluster's, a training plan's).
_ARN_REGION = re.compile(r"^arn:aws[a-z-]*:[a-z0-9-]+:([a-z]{2}(?:-[a-z]+)+-[0-9]+):")


def _load(text: str, source: str) -> Any:
    """The JSON document, through the input gate's parser (depth and number caps)."""
    from trainbill._io import parse_json

    return parse_json(text, source=source, error=import_error)


def _count(group: Mapping[str, Any], element: str, source: str) -> tuple[int, str]:
    for key in _COUNT_KEYS:
        if key in group:
            value = group[key]
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                msg = f"must be a whole number > 0 (got {value!r})"
                raise ClusterImportError(msg, source=source, field=f"{element}.{key}")
            return value, f"{element}.{key}"
    msg = f"missing InstanceCount (one of {', '.join(_COUNT_KEYS)})"
    raise ClusterImportError(msg, source=source, field=element)


def _raw_groups(data: Any, source: str) -> tuple[list[Any], Mapping[str, Any], str]:
    """(groups, the create-cluster object or {}, how errors name the list) of either shape."""
    if isinstance(data, list):
        raw_groups: Any = data
        top: Mapping[str, Any] = {}
        prefix = "instance-groups"
    elif isinstance(data, Mapping) and "InstanceGroups" in data:
        top = data
        raw_groups = data["InstanceGroups"]
        prefix = "InstanceGroups"
    else:
        msg = (
            "expected a list of instance groups or an object with InstanceGroups "
            "(create-cluster JSON)"
        )
        raise ClusterImportError(msg, source=source)
    if not isinstance(raw_groups, list) or not raw_groups:
        msg = "must be a non-empty list of instance groups"
        raise ClusterImportError(msg, source=source, field=prefix)
    return raw_groups, top, prefix


def _group(g: Any, i: int, element: str, source: str) -> Group:
    """One instance group: its EC2 type (``ml.`` stripped) and count."""
    if not isinstance(g, Mapping):
        msg = f"must be an object with InstanceType and InstanceCount (got {type(g).__name__})"
        raise ClusterImportError(msg, source=source, field=element)
    itype = g.get("InstanceType")
    if not isinstance(itype, str) or not itype:
        msg = 'missing InstanceType (e.g. "ml.p5.48xlarge")'
        raise ClusterImportError(msg, source=source, field=element)
    count, _count_el = _count(g, element, source)
    name = str(g.get("InstanceGroupName") or f"group{i}")
    # CreateCluster's InstanceGroups[].CapacityRequirements is {"OnDemand": {}} or {"Spot": {}}
    # (SageMaker API reference): a spot group was imported as on-demand.
    capacity = g.get("CapacityRequirements")
    spot = isinstance(capacity, Mapping) and "Spot" in capacity
    return Group(
        element=f"{element}.InstanceType",
        name=name,
        instance=itype.removeprefix("ml."),
        count=count,
        spot=spot,
    )


def _ebs_volume(g: Mapping[str, Any], element: str, source: str) -> tuple[float, str] | None:
    """(GB per instance, elements) of every EBS volume config of the group that states a size
    (a node gets each of them; only the last was kept), else None."""
    configs = g.get("InstanceStorageConfigs") or []
    if not isinstance(configs, list):
        msg = f"must be a list of storage configs (got {type(configs).__name__})"
        raise ClusterImportError(msg, source=source, field=f"{element}.InstanceStorageConfigs")
    total, elements = 0.0, []
    for j, cfg in enumerate(configs):
        vol = cfg.get("EbsVolumeConfig") if isinstance(cfg, Mapping) else None
        if isinstance(vol, Mapping) and "VolumeSizeInGB" in vol:
            vol_el = f"{element}.InstanceStorageConfigs[{j}].EbsVolumeConfig.VolumeSizeInGB"
            total += number(
                vol["VolumeSizeInGB"], source=source, element=vol_el, minimum=1, allow_str=False
            )
            elements.append(vol_el)
    return (total, ", ".join(elements)) if elements else None


def _storage(
    ebs: list[tuple[str, int, float, str]],
    cluster: Mapping[str, Any],
    sections: dict[str, Any],
    imported: list[tuple[str, str]],
    unsupported: list[str],
) -> None:
    """EBS per worker node: the volumes of every group of the workers' instance type, averaged
    over their nodes (two p5 groups of 1,000 and 200 GB were priced at 200 GB on all 16). Other
    groups' volumes (a controller's) are listed: their compute is an extra group, the volumes
    are not priced."""
    workers = [(n, gb, el) for inst, n, gb, el in ebs if inst == cluster["instance"]]
    if workers:
        # Over every worker node: a group without storage configs adds none (it was left out
        # of the average, so its nodes were priced the other groups' volumes).
        nodes = int(cluster["nodes"])
        sections["storage"] = {"ebs_gb_per_node": sum(n * gb for n, gb, _ in workers) / nodes}
        imported.append(("storage.ebs_gb_per_node", ", ".join(el for _, _, el in workers)))
    unsupported += [
        f"{el}: {n} × {gb:,.0f} GB on {inst} (not the workers): not priced"
        for inst, n, gb, el in ebs
        if inst != cluster["instance"]
    ]


def _unsupported_top(top: Mapping[str, Any]) -> list[str]:
    """Cluster-level keys read but not priced (an EKS orchestrator's control plane among them)."""
    unsupported = []
    orch = top.get("Orchestrator")
    if isinstance(orch, Mapping) and "Eks" in orch:
        unsupported.append(
            "Orchestrator.Eks: HyperPod on EKS also bills an EKS control plane ($/cluster-hour), "
            "not included by orchestrator=hyperpod"
        )
    for key in top:
        if key not in _NO_COST_TOP_KEYS and key not in {
            "InstanceGroups",
            "ClusterArn",
            "Orchestrator",
        }:
            unsupported.append(f"{key}: not recognised, not priced")
    return unsupported


def parse(text: str, *, source: str, catalog: Catalog) -> ImportReport:
    """Instance groups, EBS volume size and region (from a cluster ARN) into a plan dict."""
    raw_groups, top, prefix = _raw_groups(_load(text, source), source)
    unsupported: list[str] = []
    groups: list[Group] = []
    #: (instance, nodes, GB per node, elements) of each group with EBS volumes.
    ebs: list[tuple[str, int, float, str]] = []
    arns: list[str] = []
    for i, g in enumerate(raw_groups):
        element = f"{prefix}[{i}]"
        groups.append(_group(g, i, element, source))
        volume = _ebs_volume(g, element, source)
        if volume is not None:
            ebs.append((groups[-1].instance, groups[-1].count, *volume))
        if isinstance(g.get("TrainingPlanArn"), str):
            arns.append(g["TrainingPlanArn"])
            unsupported.append(
                f"{element}.TrainingPlanArn: capacity reserved under a SageMaker training plan "
                "is billed at the plan's upfront price, not priced here (priced as on-demand)"
            )
        unsupported += [
            f"{element}.{key}: not recognised, not priced"
            for key in g
            if key not in _NO_COST_GROUP_KEYS
            and key not in _COUNT_KEYS
            and key
            not in {
                "InstanceType",
                "InstanceStorageConfigs",
                "CapacityRequirements",
                "TrainingPlanArn",
            }
        ]
    sections, imported, notes = assemble(groups, catalog, provider="aws", source=source)
    cluster = sections["cluster"]
    cluster["orchestrator"] = "hyperpod"
    imported.append(("cluster.orchestrator", f"{source} (HyperPod cluster)"))
    if any(str(g.get("InstanceType", "")).startswith("ml.") for g in raw_groups):
        notes.append(
            "ml. prefix stripped to find the EC2 hardware; the HyperPod (ml.*) rate is priced "
            "where the catalog has it (a warning says where it does not)"
        )
    _storage(ebs, cluster, sections, imported, unsupported)
    orch = top.get("Orchestrator")
    eks = orch.get("Eks") if isinstance(orch, Mapping) else None
    found = [
        (arn, where)
        for arn, where in (
            (top.get("ClusterArn"), "ClusterArn"),
            (
                eks.get("ClusterArn") if isinstance(eks, Mapping) else None,
                "Orchestrator.Eks.ClusterArn",
            ),
            *((a, "TrainingPlanArn") for a in arns),
        )
        if isinstance(arn, str) and _ARN_REGION.match(arn)
    ]
    if found:
        arn, where = found[0]
        m = _ARN_REGION.match(arn)
        assert m is not None
        cluster["region"] = m.group(1)
        imported.append(("cluster.region", where))
    return ImportReport(
        kind="hyperpod",
        source=source,
        plan=sections,
        imported=tuple(imported),
        unsupported=tuple(unsupported + _unsupported_top(top)),
        notes=tuple(notes),
    )
