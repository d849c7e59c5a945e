"""The S3 gateway endpoint is offered when S3 traffic crosses NAT (issue #38 item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SEED, run_cli


def test_seed_is_offered_an_s3_gateway_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed reads its 2,000 GB dataset from S3 3 times through one NAT gateway
    (network.s3_via_nat = true), checkpoints going to FSx: the endpoint removes 6,000 GB of
    NAT data processing at $0.045/GB (AWS us-east-1) = $270, and nothing else changes."""
    code, out, err = run_cli(capsys, "forecast", str(SEED), "--json")
    assert code == 0, err
    actions = {a["kind"]: a for a in json.loads(out)["actions"]}
    act = actions["s3_gateway_endpoint"]
    assert act["change"] == {"network.s3_via_nat": False}
    assert act["saving_usd"] == pytest.approx(2000 * 3 * 0.045, rel=1e-6)
    assert "no charge for gateway endpoints" in act["caveat"]


def test_no_endpoint_action_without_nat_s3_traffic(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan = tmp_path / "p.toml"
    plan.write_text(
        SEED.read_text(encoding="utf-8").replace("s3_via_nat = true", "s3_via_nat = false"),
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "forecast", str(plan), "--json")
    assert code == 0, err
    assert "s3_gateway_endpoint" not in {a["kind"] for a in json.loads(out)["actions"]}
