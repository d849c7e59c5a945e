"""Two-sided audits (issue #38 item 5): an understated quote or line is flagged as loudly as an
inflated one, by how much, with the arithmetic.

The article's "50 P4d × 48 h ≈ $40k": p4d.24xlarge on demand on 2025-05-01 is $32.7726 per
instance-hour (prices.csv, AWS Price List archives 2024-01..2025-05), so the list-price quote is
50 × $32.7726 × 48 h = $78,654.24; $40,000 is $38,654 (49 %) below it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import TODAY, run_cli
from trainbill.catalog import Catalog
from trainbill.check import audit_quote
from trainbill.claims import audit_claims, claims_from_dict
from trainbill.forecasting import forecast
from trainbill.spec import plan_from_dict

P4D_PLAN: dict[str, Any] = {
    "run": {"name": "p4d-48h", "hours": 48},
    "cluster": {"provider": "aws", "region": "us-east-1", "instance": "p4d.24xlarge", "nodes": 50},
    "purchase": {"spot_fraction": 0},
    "prices": {"as_of": "2025-05-01"},
}
LIST_QUOTE = 50 * 32.7726 * 48  # = 78,654.24


def _write(tmp_path: Path, quote: float) -> Path:
    (tmp_path / "p4d.toml").write_text(
        '[run]\nname = "p4d-48h"\nhours = 48\n[cluster]\nprovider = "aws"\nregion = "us-east-1"\n'
        'instance = "p4d.24xlarge"\nnodes = 50\n[purchase]\nspot_fraction = 0\n[prices]\n'
        "as_of = 2025-05-01\n",
        encoding="utf-8",
    )
    claims = tmp_path / "claims.toml"
    claims.write_text(
        f'name = "50 P4d for 48 h"\nquote_usd = {quote}\nplan = "p4d.toml"\n', encoding="utf-8"
    )
    return claims


def test_cli_flags_the_articles_understated_p4d_quote(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A claims file with only a quote is audited; $40,000 is not "consistent" and its
    arithmetic names the list-price figure and the gap."""
    code, out, err = run_cli(capsys, "check", "--claims", str(_write(tmp_path, 40000)), "--json")
    assert code == 0, err
    doc = json.loads(out)
    (quote,) = [ln for ln in doc["lines"] if ln["line"] == 0]
    assert quote["verdict"] != "consistent"
    assert quote["verdict"] == "implausible"  # as loud as an inflated line
    assert f"${LIST_QUOTE:,.2f}" in quote["arithmetic"]  # $78,654.24
    assert f"UNDERSTATED by ${LIST_QUOTE - 40000:,.0f}" in quote["arithmetic"]  # $38,654
    assert "49% of the list-price quote" in quote["arithmetic"]  # 38,654 / 78,654 = 0.491


@pytest.mark.parametrize(
    ("quote", "verdict", "needle"),
    [
        (LIST_QUOTE * 2, "implausible", f"OVERSTATED by ${LIST_QUOTE:,.0f}"),  # 2× is 100% over
        (78000, "consistent", "within 5% of the plan's quote"),  # 0.8% below: rounding
        (40000, "implausible", "UNDERSTATED by $38,654"),
    ],
)
def test_the_quote_is_held_to_the_plans_quote_both_ways(
    catalog: Catalog, quote: float, verdict: str, needle: str
) -> None:
    fc = forecast(plan_from_dict(P4D_PLAN), catalog, today=TODAY)
    assert fc.quote_usd == pytest.approx(LIST_QUOTE)
    claim = claims_from_dict({"name": "q", "quote_usd": quote}, source="test")
    (a,) = audit_claims(claim, fc, catalog).lines
    assert a.verdict == verdict
    assert needle in a.arithmetic


def test_an_understated_line_is_flagged_with_the_dollars_it_leaves_out(catalog: Catalog) -> None:
    """A compute line of $10,000 for the plan's 2,400 instance-hours: it buys $10,000 / $32.7726
    = 305 instance-hours, under half of 2,400: implausible, and the arithmetic gives the
    2,400 × $32.7726 = $78,654 the inputs cost and the $68,654 left out."""
    fc = forecast(plan_from_dict(P4D_PLAN), catalog, today=TODAY)
    claim = claims_from_dict(
        {"name": "q", "lines": [{"category": "compute", "item": "GPUs", "amount_usd": 10000}]},
        source="test",
    )
    (a,) = audit_claims(claim, fc, catalog).lines
    assert a.verdict == "implausible"
    assert "UNDERSTATED" in a.arithmetic
    assert f"the claim is ${2400 * 32.7726 - 10000:,.0f} less" in a.arithmetic


def test_check_says_how_far_a_quote_is_from_the_least_the_work_costs(catalog: Catalog) -> None:
    """70B on 1.4T tokens on 512 H100 at a given $2/GPU-hour: 6 × 70e9 × 1.4e12 = 5.88e23 FLOPs;
    at the best published MFU the work takes 5.88e23 / (989e12 × best × 3600) GPU-hours, × $2
    is the least it costs. A quote 5× that is said to be above it by 4× that least."""
    best = float(catalog.value("time.best_published_mfu"))
    least = 5.88e23 / (989e12 * best * 3600) * 2.0
    a = audit_quote(
        catalog=catalog, cost_usd=5 * least, params=70e9, tokens=1.4e12, gpu="h100", gpus=512,
        usd_per_gpu_hour=2.0,
    )  # fmt: skip
    assert a.verdict == "plausible"
    assert f"costs at least ${least:,.0f}" in a.explanation
    assert f"above it by ${4 * least:,.0f}" in a.explanation
    low = audit_quote(
        catalog=catalog, cost_usd=least / 2, params=70e9, tokens=1.4e12, gpu="h100", gpus=512,
        usd_per_gpu_hour=2.0,
    )  # fmt: skip
    assert low.verdict != "plausible"
    assert f"UNDERSTATED: below it by ${least / 2:,.0f}" in low.explanation
