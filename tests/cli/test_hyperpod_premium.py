"""Issue #38's HyperPod must-shows, end to end through the CLI on the packaged catalog.

The expected unit prices are the catalog's cited SageMaker and EC2 rows (prices-2026-12 §2 and
the AWS EC2 Price List), written out here: pre-cut ml.p5.48xlarge $113.14 (third-party, low)
over EC2 $98.32; post-cut $63.296 over $55.04.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SEED, run_cli

HYPERPOD_ARTICLE = "tests/data/importers/hyperpod-article.json"  # 16 × p5.48xlarge


def test_imported_hyperpod_cluster_pays_an_ml_premium(capsys: pytest.CaptureFixture[str]) -> None:
    """16 × ml.p5.48xlarge for 100 h, priced 2026-03-01 (after the June-2025 cut): the premium
    line is 16 nodes × wall hours × ($63.296 − $55.04 = $8.256), above $0."""
    code, out, err = run_cli(
        capsys, "forecast", "--from", "hyperpod", HYPERPOD_ARTICLE, "--hours", "100",
        "--as-of", "2026-03-01", "--json",
    )  # fmt: skip
    assert code == 0, err
    fc = json.loads(out)
    (line,) = [x for x in fc["lines"] if x["category"] == "orchestration"]
    assert line["unit_price_usd"] == pytest.approx(63.296 - 55.04)
    wall = line["quantity"] / 16  # 16 on-demand nodes over the wall-clock
    assert wall >= 100.0  # the run's 100 h plus whatever stalls and failures add
    assert line["cost_usd"] == pytest.approx(16 * wall * 8.256)
    assert line["cost_usd"] > 0
    assert "third-party" in line["source"].lower()


def test_flagship_comparison_shows_a_hyperpod_premium(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed plan (2025-05-01, before the cut and before HyperPod offered Spot): HyperPod's
    premium is every one of the 32 nodes × its wall hours × ($113.14 − $98.32 = $14.82), and
    HyperPod no longer ranks below raw EC2 ($162,735 vs $163,698 before the ml.* rates)."""
    code, out, err = run_cli(capsys, "compare-orchestrators", str(SEED), "--json")
    assert code == 0, err
    rows = {r["orchestrator"]: r for r in json.loads(out)}
    hp = rows["hyperpod"]
    assert hp["premium_priced"] is True
    assert hp["orchestration_usd"] == pytest.approx(32 * hp["wall_hours"] * (113.14 - 98.32))
    assert hp["orchestration_usd"] > 0
    assert hp["total_usd"] > rows["ec2"]["total_usd"]
    assert hp["per_100h_usd"] == pytest.approx(hp["total_usd"] / hp["wall_hours"] * 100)
    assert any("before HyperPod offered Spot" in n for n in hp["notes"])


def test_comparison_table_says_an_unpriced_premium_on_its_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A HyperPod instance with no ml.* price and none derivable (an overlay cannot remove rows,
    so the plan uses p5e.48xlarge, sold only as Capacity Blocks, in us-east-2): its row says
    NOT PRICED beside the figure and its bill is marked a lower bound, not ranked."""
    plan = tmp_path / "p5e.toml"
    plan.write_text(
        '[run]\nhours = 10\n[model]\nparams = 7e9\n[cluster]\nprovider = "aws"\n'
        'region = "us-east-2"\ninstance = "p5e.48xlarge"\nnodes = 2\n[prices]\n'
        "as_of = 2026-03-01\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "compare-orchestrators", str(plan), "--wide")
    assert code == 0, err
    (row,) = [x for x in out.splitlines() if "SageMaker HyperPod" in x and "│" in x]
    assert "NOT PRICED" in row
    assert "lower bound, not ranked" in row
