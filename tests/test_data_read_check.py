"""The data read is checked against tokens × bytes per token (issue #38 item 6)."""

from __future__ import annotations

from conftest import TODAY
from trainbill.catalog import Catalog
from trainbill.spec import plan_from_dict
from trainbill.usage import resolve_job


def _notes(catalog: Catalog, dataset_gb: float, epochs: float, tokens: float) -> list[str]:
    plan = plan_from_dict({
        "model": {"params": 7e9, "tokens": tokens},
        "cluster": {"instance": "p5.48xlarge", "nodes": 2},
        "prices": {"as_of": "2026-01-05"},
        "data": {"dataset_gb": dataset_gb, "epochs": epochs},
    })  # fmt: skip
    job = resolve_job(plan, catalog, today=TODAY)
    return [w for w in job.warnings if "does not match the tokens trained" in w]


def test_a_mismatched_read_is_warned(catalog: Catalog) -> None:
    """1e11 tokens × 4 bytes (defaults.model.bytes_per_token) = 400 GB, but 2,000 GB × 3
    epochs = 6,000 GB are read: 15× apart, beyond the factor of 2."""
    (note,) = _notes(catalog, 2000, 3, 1e11)
    assert "6,000 GB" in note
    assert "400 GB" in note
    assert "15.0× apart" in note


def test_a_read_within_the_factor_is_not(catalog: Catalog) -> None:
    """100 GB × 3 epochs = 300 GB against 400 GB: 1.33×, a storage format, not a mistake."""
    assert _notes(catalog, 100, 3, 1e11) == []
    # 2 × 400 = 800 GB is the edge, still accepted; 801 GB is not
    assert _notes(catalog, 800, 1, 1e11) == []
    assert len(_notes(catalog, 801, 1, 1e11)) == 1
