"""SkyPilot export of TPU plans uses slice names, not instance types."""

from __future__ import annotations

import yaml

from conftest import SEED
from trainbill.catalog import Catalog
from trainbill.importers.export import export_skypilot
from trainbill.spec import load_plan, plan_from_dict


def test_v6e_slice_counts_chips(catalog: Catalog) -> None:
    """64 v6e chips → one SkyPilot node with accelerators tpu-v6e-64 (v6e names count chips)."""
    text = export_skypilot(
        plan_from_dict(
            {
                "run": {"hours": 5},
                "cluster": {"provider": "gcp", "instance": "tpu-v6e", "nodes": 64},
            }
        ),
        catalog,
    )
    task = yaml.safe_load(text)
    assert task["num_nodes"] == 1
    assert task["resources"]["accelerators"] == "tpu-v6e-64"
    assert "instance_type" not in task["resources"]
    assert "64 × tpu-v6e" in text


def test_v5p_slice_counts_cores(catalog: Catalog) -> None:
    """64 v5p chips = 128 TensorCores → tpu-v5p-128 (v4/v5p names count cores, two per chip)."""
    text = export_skypilot(
        plan_from_dict(
            {
                "run": {"hours": 5},
                "cluster": {"provider": "gcp", "instance": "tpu-v5p", "nodes": 64},
            }
        ),
        catalog,
    )
    assert yaml.safe_load(text)["resources"]["accelerators"] == "tpu-v5p-128"


def test_export_says_what_a_task_cannot_ask_for(catalog: Catalog) -> None:
    """Was silent: the seed plan on EKS with its 24,000 GB FSx exported as a plain VM task. The
    YAML is the same (a task cannot ask for either), but its comments say both."""
    plan = load_plan(SEED)
    plan = plan.model_copy(
        update={"cluster": plan.cluster.model_copy(update={"orchestrator": "eks"})}
    )
    text = export_skypilot(plan, catalog)
    assert "# The plan runs on eks" in text
    assert "# The plan prices a 24,000 GB Lustre file system (persistent_250)" in text
