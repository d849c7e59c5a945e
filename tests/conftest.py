"""Shared fixtures: the packaged catalog and a plan with every hidden cost switched off."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from trainbill.catalog import Catalog, load_catalog

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
TODAY = date(2026, 12, 2)


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The packaged catalog (no overlays)."""
    return load_catalog()


def zero_hidden_plan(**cluster: Any) -> dict[str, Any]:
    """A plan whose every hidden-cost rate is zero: its bill must equal its quote."""
    return {
        "run": {"name": "zero", "hours": 10},
        "cluster": {"instance": "p5.48xlarge", "nodes": 4, **cluster},
        "prices": {"as_of": "2025-05-01"},
        "storage": {"ebs_gb_per_node": 0, "fsx_capacity_gb": 0},
        "data": {"dataset_gb": 0},
        "network": {"nat_gateways": 0, "public_ips_per_node": 0, "nat_gb_per_node_hour": 0},
        "monitoring": {"custom_metrics_per_node": 0, "logs_gb_per_node_hour": 0},
        "reliability": {"gpu_failure_rate_per_gpu_day": 0, "straggler_cv": 0, "spot_reclaim_rate_per_node_hour": 0},
    }
