"""Write a plan's cluster as a SkyPilot task YAML: we forecast, the user launches.

SkyPilot launches one uniform node pool per task, so a plan with a *mixed* spot share (say
half the nodes on spot) cannot be expressed: the task asks for on-demand and a comment says
why. Extra groups (head nodes) are left out with a comment for the same reason.
"""

from __future__ import annotations

from typing import Any

import yaml

from trainbill.catalog import Catalog
from trainbill.spec import Plan
from trainbill.usage import resolve_cluster

__all__ = ["export_skypilot", "skypilot_accelerator_name"]


def skypilot_accelerator_name(accel_id: str) -> str:
    """SkyPilot's name for a catalog accelerator id (``a100-40gb`` → ``A100``)."""
    from trainbill.importers.skypilot import SKYPILOT_ACCELERATOR_NAMES

    for name, aid in SKYPILOT_ACCELERATOR_NAMES.items():
        if aid == accel_id:
            return name
    return accel_id.upper()


#: Google Cloud TPU slice names: ``tpu-<generation>-<N>`` where N counts TensorCores on v4/v5p
#: (two per chip) and chips on v5e/v6e (Google Cloud TPU documentation, "TPU versions").
_TPU_SLICE = {
    "tpu-v4": ("tpu-v4", 2),
    "tpu-v5p": ("tpu-v5p", 2),
    "tpu-v5e": ("tpu-v5litepod", 1),
    "tpu-v6e": ("tpu-v6e", 1),
}


def export_skypilot(plan: Plan, catalog: Catalog) -> str:
    """SkyPilot task YAML text for the plan's GPU workers (or TPU slice)."""
    inst, nodes = resolve_cluster(plan, catalog)
    resources: dict[str, Any] = {"cloud": inst.provider}
    if plan.cluster.region:
        resources["region"] = plan.cluster.region
    tpu_note = ""
    header = f"# Exported by trainbill from plan {plan.run.name!r}: {nodes} × {inst.instance}."
    if inst.billing == "chip" and inst.accelerator in _TPU_SLICE:
        # A TPU pod slice is one SkyPilot node addressed by its slice name, not an instance type.
        prefix, per_chip = _TPU_SLICE[inst.accelerator]
        resources["accelerators"] = f"{prefix}-{nodes * per_chip}"
        tpu_note = (
            f"# TPU slice for {nodes} chips; Google offers fixed slice sizes, so pick the nearest "
            "available one if this size does not exist."
        )
        nodes = 1
    else:
        resources["instance_type"] = inst.instance
        resources["accelerators"] = (
            f"{skypilot_accelerator_name(inst.accelerator)}:{inst.accelerator_count}"
        )
    spot = plan.purchase.spot_fraction
    resources["use_spot"] = spot == 1.0
    if plan.storage.ebs_gb_per_node:
        resources["disk_size"] = round(plan.storage.ebs_gb_per_node)
    task: dict[str, Any] = {"name": plan.run.name, "num_nodes": nodes, "resources": resources}
    comments = [header]
    if tpu_note:
        comments.append(tpu_note)
    if 0.0 < spot < 1.0:
        comments.append(
            f"# The plan puts {spot:.0%} of nodes on spot; a SkyPilot task is one uniform pool, "
            "so this asks for on-demand."
        )
    if plan.cluster.extra_groups:
        groups = ", ".join(
            f"{g.count} × {g.instance} ({g.name})" for g in plan.cluster.extra_groups
        )
        comments.append(f"# Not exported (launch separately): {groups}.")
    # What the forecast priced that a task YAML cannot ask for: said, so the launched cluster
    # is not mistaken for the one the bill describes.
    orchestrator = plan.cluster.orchestrator
    if orchestrator not in (None, "ec2", "vm"):
        comments.append(
            f"# The plan runs on {orchestrator}; this task launches plain VMs (point SkyPilot at "
            "that cluster, e.g. infra: k8s, to run there)."
        )
    if plan.storage.fsx_capacity_gb:
        comments.append(
            f"# The plan prices a {plan.storage.fsx_capacity_gb:,.0f} GB Lustre file system "
            f"({plan.storage.fsx_tier or 'default tier'}); create it separately and mount it "
            "(file_mounts / volumes)."
        )
    comments.append("# Add setup/run commands before 'sky launch'.")
    body: str = str(yaml.safe_dump(task, sort_keys=False))
    return "\n".join(comments) + "\n" + body
