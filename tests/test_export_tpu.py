"""SkyPilot export of TPU plans uses slice names, not instance types."""

from __future__ import annotations

import yaml

from trainbill.catalog import Catalog
from trainbill.importers.export import export_skypilot
from trainbill.spec import plan_from_dict


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
