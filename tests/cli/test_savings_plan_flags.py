"""``forecast --savings-plan`` (bought for this run) and ``--savings-plan-covered`` (already
held) on the flagship, issue #38.

The flagship is priced 2025-05-01, before any published p5.48xlarge commitment rate. The
default kind, a Compute Savings Plan, has no published rate: its proxy is the Convertible RI
1-yr No Upfront $43.344 of 2025-11-30 ([VAN-2025-11], prices-2026-12.md §1), carried back by
the on-demand ratio: $98.32 (on demand on 2025-05-01) × $43.344 ÷ $55.04 (on demand on
2025-11-30) = $77.427 per instance-hour.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import SEED, refused, run_cli

RATE = 98.32 * 43.344 / 55.04  # = 77.427


def _json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    code, out, err = run_cli(
        capsys, "forecast", str(SEED), "--spot-fraction", "0", *flags, "--json"
    )
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _discount(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [ln for ln in doc["lines"] if ln["category"] == "discount"]


def test_bought_for_one_run_costs_more_than_on_demand(capsys: pytest.CaptureFixture[str]) -> None:
    """Bought: 32 covered nodes × $77.427 = $2,477.66/h for the whole 8,760-h term, against a
    run of about 81 h: the total is at least the on-demand total; the unused term is its own
    line, and the actions say not to buy one for a single run."""
    od = _json(capsys)
    bought = _json(capsys, "--savings-plan", "1yr")
    assert bought["total_usd"] >= od["total_usd"]
    saving, unused = _discount(bought)
    assert saving["unit_price_usd"] == pytest.approx(-(98.32 - RATE), rel=1e-6)
    assert unused["item"] == "1yr Compute Savings Plan: unused commitment"
    assert unused["unit_price_usd"] == pytest.approx(32 * RATE, rel=1e-6)
    whole_term = 32 * RATE * 8760
    assert unused["cost_usd"] + saving["quantity"] * RATE == pytest.approx(whole_term, rel=1e-6)
    (no_buy,) = [a for a in bought["actions"] if a["kind"] == "no_savings_plan"]
    assert "Do not buy a 1yr Compute Savings Plan for this single run" in no_buy["title"]
    assert no_buy["total_usd"] == pytest.approx(od["total_usd"], rel=1e-6)


def test_covered_by_a_held_commitment_costs_less_and_names_its_rate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Held: the run's on-demand hours at $77.427 instead of $98.32, below the on-demand total;
    the basis says it is an existing commitment, a proxy, and names the rate's source and both
    prices and dates of the carry-back."""
    od = _json(capsys)
    held = _json(capsys, "--savings-plan-covered", "1yr")
    assert held["total_usd"] < od["total_usd"]
    (line,) = _discount(held)
    basis = line["basis"]
    assert "existing commitment" in basis
    assert "proxy" in basis
    assert "[VAN-2025-11]" in basis  # the rate's source key
    assert "price point effective 2025-11-30" in basis  # and its date
    assert "on-demand $98.32 on 2025-05-01" in basis
    assert "$43.344 ÷ on-demand $55.04, both on 2025-11-30" in basis
    # The saving is the covered hours × the difference: od − held = quantity × (98.32 − 77.427).
    assert od["total_usd"] - held["total_usd"] == pytest.approx(
        line["quantity"] * (98.32 - RATE), rel=1e-6
    )


def test_covered_and_bought_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    refused(
        ["forecast", str(SEED), "--savings-plan-covered", "1yr", "--savings-plan", "3yr"],
        capsys,
        "--savings-plan-covered",
        "not both",
    )


def test_an_ec2_instance_plan_for_another_family_names_the_kind_that_would(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    """A p5 EC2 Instance Savings Plan held, the run moved to trn1: an error naming the kind that
    covers it (Compute)."""
    plan = tmp_path / "trn1.toml"
    plan.write_text(
        SEED.read_text(encoding="utf-8")
        .replace('instance = "p5.48xlarge"', 'instance = "trn1.32xlarge"')
        .replace('savings_plan = "none"', 'savings_plan = "1yr"\nsavings_plan_kind = "ec2-instance"'
                 '\nsavings_plan_family = "p5"\ncommitment = "existing"'),
        encoding="utf-8",
    )  # fmt: skip
    refused(["forecast", str(plan)], capsys, "savings_plan_family", "a Compute Savings Plan would")
