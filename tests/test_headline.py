"""Headline: quote, planned bill, real bill and P90 budget kept apart; the ranked actions.

Prices used by hand below, all from the packaged catalog on 2025-05-01 (``--explain`` names
them): p5.48xlarge on-demand $98.32/h (AWS Price List archives 2024-01..2025-05), spot $25.66/h
(SkyPilot catalog v7 per-AZ midpoint), use1-az3 spot $20.9934/h (SkyPilot catalog v7 per-AZ
SpotPrice); c5.large $0.085/h (FOCUS 1.0 sample 2024-09). Commitment rates are the
ILLUSTRATIVE ones of ``conftest`` (Compute SP 1yr $60, 3yr $45).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, PROFILE_TOML, SEED, TODAY, run_cli, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.forecasting import forecast
from trainbill.headline import HIDDEN_LABELS, Advised, advise, waterfall
from trainbill.ledger import CATEGORIES
from trainbill.simulate import simulate
from trainbill.spec import Plan, load_plan, plan_from_dict

#: The seed plan's planned bill: 32 nodes × 72 h × (50% × $98.32 + 50% × $25.66)
#: = 2,304 node-hours × (49.16 + 12.83) = 2,304 × 61.99 = $142,824.96.
SEED_PLANNED = 32 * 72 * (0.5 * 98.32 + 0.5 * 25.66)
#: The seed plan's quote: 32 × $98.32 × 72 h = $226,529.28.
SEED_QUOTE = 32 * 98.32 * 72


def _advised(plan: Plan, catalog: Catalog) -> Advised:
    return advise(plan, forecast(plan, catalog, today=TODAY), catalog, today=TODAY)


@pytest.fixture(scope="module")
def seed(catalog: Catalog) -> Advised:
    return _advised(load_plan(SEED), catalog)


def test_seed_planned_bill_is_the_quote_hours_at_the_purchase_mix(seed: Advised) -> None:
    """Planned = 32 × 72 h × (50% × $98.32 + 50% × $25.66) = $142,824.96, below the $226,529.28
    quote."""
    assert pytest.approx(142_824.96) == SEED_PLANNED
    assert seed.forecast.planned_usd == pytest.approx(SEED_PLANNED, abs=0.005)
    assert seed.forecast.quote_usd == pytest.approx(SEED_QUOTE)
    assert seed.forecast.planned_usd < seed.forecast.quote_usd
    assert "$98.32" in seed.forecast.planned_basis
    assert "$25.66" in seed.forecast.planned_basis


def test_seed_hidden_costs_are_real_minus_planned(seed: Advised) -> None:
    """hidden = real − planned > 0 and hidden multiplier = real / planned > 1 (the quote's 0.72 hid
    it)."""
    assert seed.forecast.hidden_usd == pytest.approx(
        seed.forecast.total_usd - SEED_PLANNED, abs=0.01
    )
    assert seed.forecast.hidden_multiplier == pytest.approx(seed.forecast.total_usd / SEED_PLANNED)
    assert seed.forecast.hidden_multiplier > 1 > seed.forecast.multiplier


def test_hidden_by_category_adds_up_to_hidden(seed: Advised) -> None:
    """Every category but compute's planned lines is hidden; no extra groups, so hidden compute is
    0."""
    hidden = seed.forecast.hidden_by_category()
    assert list(hidden) == list(CATEGORIES)
    assert sum(hidden.values()) == pytest.approx(seed.forecast.hidden_usd)
    assert hidden["compute"] == 0.0
    by_cat = seed.forecast.ledger.by_category()
    for cat in CATEGORIES[1:]:
        assert hidden[cat] == by_cat[cat]


def test_seed_must_show_in_the_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    """forecast --json: planned_usd < quote_usd, hidden_multiplier > 1, budget_usd ≥ total_usd."""
    code, out, err = run_cli(capsys, "forecast", str(SEED), "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["planned_usd"] == pytest.approx(SEED_PLANNED, abs=0.005)
    assert d["planned_usd"] < d["quote_usd"]
    assert d["hidden_multiplier"] > 1
    assert d["budget_usd"] >= d["total_usd"]
    assert d["hidden_usd"] == pytest.approx(d["total_usd"] - d["planned_usd"])
    assert d["purchase_mix_usd"] == pytest.approx(SEED_PLANNED - SEED_QUOTE, abs=0.01)
    assert d["budget"]["trials"] == 2000
    assert d["budget"]["seed"] == 0
    assert "time model" in d["budget"]["basis"] or "P90 of 2,000" in d["budget"]["basis"]
    assert [a["saving_usd"] for a in d["actions"]] == sorted(
        (a["saving_usd"] for a in d["actions"]), reverse=True
    )


def test_budget_is_the_simulated_p90_and_repeats(catalog: Catalog, seed: Advised) -> None:
    """Budget = P90 of 2,000 simulated runs from seed 0: the same number on every call."""
    assert seed.outlook is not None
    assert seed.outlook.budget is not None
    sim = simulate(seed.forecast.usage, catalog, trials=2000, rng=0)
    assert seed.outlook.budget.usd == sim.cost_usd.p90
    again = _advised(load_plan(SEED), catalog)
    assert again.as_dict()["budget_usd"] == seed.as_dict()["budget_usd"]
    assert again.as_dict()["actions"] == seed.as_dict()["actions"]


def test_budget_never_below_the_expected_bill(catalog: Catalog) -> None:
    """0.001 failures/GPU-day × 32 GPUs × 10 h / 24 = 0.0133 expected: 98.7% of runs have none, so
    the P90 run costs the quote 4 × 10 × $98.32 = $3,932.80, below the expected bill; budget =
    expected."""
    raw = zero_hidden_plan()
    raw["reliability"] = {**raw["reliability"], "gpu_failure_rate_per_gpu_day": 0.001}
    fc = _advised(plan_from_dict(raw), catalog)
    assert fc.outlook is not None
    assert fc.outlook.budget is not None
    b = fc.outlook.budget
    assert b.p90_usd == pytest.approx(4 * 10 * 98.32)
    assert fc.forecast.total_usd > b.p90_usd
    assert b.usd == fc.forecast.total_usd
    assert "costs less than the expected bill" in b.basis


def test_existing_commitment_is_planned(commitment_catalog: Catalog) -> None:
    """Existing 1yr Compute SP at $60: planned = real = 4 × 10 h × $60 = $2,400; nothing hidden."""
    raw = zero_hidden_plan()
    raw["purchase"] = {"savings_plan": "1yr", "commitment": "existing"}
    fc = forecast(plan_from_dict(raw), commitment_catalog, today=TODAY)
    assert fc.planned_usd == pytest.approx(2400.0)
    assert fc.hidden_usd == pytest.approx(0.0, abs=1e-6)
    # No "+<$1" row of float residue in the waterfall:
    assert fc.hidden_by_category()["compute"] == 0.0
    assert fc.planned_usd - fc.quote_usd == pytest.approx(2400.0 - 4 * 10 * 98.32)


def test_unused_commitment_term_is_hidden(commitment_catalog: Catalog) -> None:
    """Bought 1yr SP: planned $2,400 at the commitment rate; the unused 8,750 h × $240/h =
    $2,100,000 is hidden."""
    raw = zero_hidden_plan()
    raw["purchase"] = {"savings_plan": "1yr"}
    fc = forecast(plan_from_dict(raw), commitment_catalog, today=TODAY)
    assert fc.planned_usd == pytest.approx(2400.0)
    assert fc.hidden_by_category()["discount"] == pytest.approx(240.0 * 8750)
    assert fc.hidden_usd == pytest.approx(240.0 * 8750)


def test_extra_instance_groups_are_hidden(catalog: Catalog) -> None:
    """A c5.large head node is not in the quote: 1 × 10 h × $0.085 = $0.85 of hidden compute."""
    raw = zero_hidden_plan(extra_groups=[{"name": "head", "instance": "c5.large"}])
    fc = forecast(plan_from_dict(raw), catalog, today=TODAY)
    assert fc.planned_usd == pytest.approx(4 * 10 * 98.32)
    assert fc.hidden_by_category()["compute"] == pytest.approx(0.85)
    labels = [s.label for s in waterfall(fc)]
    assert HIDDEN_LABELS["compute"] in labels


def test_waterfall_runs_quote_planned_real_budget(seed: Advised) -> None:
    """Quote → mix savings → planned → hidden costs (largest first) → real bill → P90 margin →
    budget."""
    steps = waterfall(seed)
    totals = [s for s in steps if s.total]
    assert [s.label.split(" ")[0] for s in totals] == ["quote", "planned", "real", "budget"]
    assert [s.end for s in totals[:2]] == [
        pytest.approx(SEED_QUOTE),
        pytest.approx(SEED_PLANNED, abs=0.005),
    ]
    assert totals[2].end == pytest.approx(seed.forecast.total_usd)
    assert seed.outlook is not None
    assert seed.outlook.budget is not None
    assert totals[3].end == seed.outlook.budget.usd
    level = 0.0
    for s in steps:  # every total is where the bars before it end
        if s.total:
            assert s.end == pytest.approx(level if level else s.end)
        else:
            assert s.start == pytest.approx(level)
        level = s.end
    hidden = [abs(s.delta) for s in steps[3:-3]]
    assert hidden == sorted(hidden, reverse=True)
    assert all("_" not in s.label for s in steps)


def test_seed_actions_spot_then_zone(seed: Advised) -> None:
    """All 32 on spot saves at least the compute difference 16 × 72 × ($98.32 − $25.66) =
    $83,704.32; zone use1-az3 saves at least 16 × 72 × ($25.66 − $20.9934) = $5,375.92 on the
    spot nodes."""
    assert seed.outlook is not None
    acts = {a.kind: a for a in seed.outlook.actions}
    assert list(acts)[:2] == ["spot", "zone"]
    spot, zone = acts["spot"], acts["zone"]
    assert spot.change == {"purchase.spot_fraction": 1.0}
    assert spot.saving_usd > 16 * 72 * (98.32 - 25.66)
    assert spot.total_usd == pytest.approx(seed.forecast.total_usd - spot.saving_usd)
    assert "no deadline" in spot.caveat
    assert "not guaranteed capacity" in spot.caveat
    assert zone.change == {"cluster.zone": "use1-az3"}
    assert zone.saving_usd > 16 * 72 * (25.66 - 20.9934)
    assert "move" in zone.caveat
    # A p5.48xlarge Savings Plan is priced (issue #38: the Convertible RI proxy, carried back to
    # 2025-05-01), but a whole term bought for a 72-h run never pays; no other region prices p5.
    assert "savings_plan" not in acts
    assert "region" not in acts
    assert not any("no published 1yr" in n for n in seed.outlook.notes)


def test_spot_action_states_the_deadline_odds(catalog: Catalog) -> None:
    """With run.deadline_hours the spot caveat gives the chance of missing it before → after."""
    raw: dict[str, Any] = load_plan(SEED).model_dump(mode="json", exclude_none=True)
    raw["run"]["deadline_hours"] = 82
    fc = _advised(plan_from_dict(raw), catalog)
    assert fc.outlook is not None
    assert fc.outlook.budget is not None
    assert fc.outlook.budget.deadline_miss_probability is not None
    spot = next(a for a in fc.outlook.actions if a.kind == "spot")
    assert "chance of missing the 82 h deadline" in spot.caveat


def test_checkpoint_interval_action_moves_to_the_optimum(catalog: Catalog) -> None:
    """Seed at 0.5 h: 144 checkpoints of ~3 min instead of 36; the optimum is capped at the
    catalog's 2 h."""
    raw: dict[str, Any] = load_plan(SEED).model_dump(mode="json", exclude_none=True)
    raw["checkpoint"]["interval_hours"] = 0.5
    fc = _advised(plan_from_dict(raw), catalog)
    assert fc.outlook is not None
    ck = next(a for a in fc.outlook.actions if a.kind == "checkpoint_interval")
    assert ck.change == {
        "checkpoint.interval_hours": float(catalog.value("defaults.checkpoint.interval_hours"))
    }
    # At least the 108 stalls saved minus the longer losses: positive.
    assert ck.saving_usd > 0
    assert "rollback" in ck.caveat


def test_savings_plan_action_only_where_it_pays(commitment_catalog: Catalog) -> None:
    """3 years of 4 nodes: a bought 3yr SP at $45 saves 4 × 26,280 h × ($98.32 − $45) =
    $5,604,998.40. Only the illustrative p5 rates count: the packaged p5 commitment rates are
    price data, which must not move this logic test."""
    commitment_catalog = replace(
        commitment_catalog,
        prices=tuple(
            p for p in commitment_catalog.prices
            if p.item != "p5.48xlarge" or p.option in ("on_demand", "spot")
            or p.source == "ILLUSTRATIVE test rate"
        ),
    )  # fmt: skip
    raw = zero_hidden_plan()
    raw["run"] = {"name": "three-years", "hours": 26_280}
    fc = _advised(plan_from_dict(raw), commitment_catalog)
    assert fc.outlook is not None
    sp = next(a for a in fc.outlook.actions if a.kind == "savings_plan")
    assert sp.saving_usd == pytest.approx(4 * 26_280 * (98.32 - 45.0))
    assert sp.change["purchase.savings_plan"] == "3yr"
    assert "whole 3yr term" in sp.caveat
    # 26,280 h is exactly one 3-year term (3 × 8,760 h): no unused hours, yet the commitment
    # still bills 4 covered nodes × $45 = $180.00 every hour of the term.
    assert "commits $180.00/h" in sp.caveat
    short = _advised(
        plan_from_dict(zero_hidden_plan()), commitment_catalog
    )  # 10 h: the term never pays
    assert short.outlook is not None
    assert all(a.kind != "savings_plan" for a in short.outlook.actions)


def test_right_size_within_the_deadline(catalog: Catalog) -> None:
    """64 × p5 pretraining with 1,000 h allowed: a smaller cluster within the deadline is
    cheaper."""
    raw: dict[str, Any] = load_plan(EXAMPLES / "pretrain-512-h100.toml").model_dump(
        mode="json", exclude_none=True
    )
    raw["run"]["deadline_hours"] = 1000
    fc = _advised(plan_from_dict(raw), catalog)
    assert fc.outlook is not None
    rs = next(a for a in fc.outlook.actions if a.kind == "right_size")
    assert rs.change["cluster.nodes"] < 64
    assert rs.saving_usd > 0
    assert "wall-clock" in rs.caveat


def test_no_right_size_that_only_takes_longer(seed: Advised) -> None:
    """Without a deadline the plan's own wall-clock is the limit: no 'use 11 nodes for 3× the
    time'."""
    assert seed.outlook is not None
    assert all(a.kind != "right_size" for a in seed.outlook.actions)


def test_forecast_without_outlook_has_null_budget(catalog: Catalog) -> None:
    """forecast() alone does not simulate: the JSON keys exist with null budget and actions."""
    d = forecast(load_plan(SEED), catalog, today=TODAY).as_dict()
    assert d["budget_usd"] is None
    assert d["actions"] is None
    assert d["planned_usd"] == pytest.approx(SEED_PLANNED, abs=0.005)


def test_cli_headline_reads_quote_to_budget(capsys: pytest.CaptureFixture[str]) -> None:
    """The table view prints the waterfall in order, whole dollars with separators, and what to
    do."""
    code, out, err = run_cli(capsys, "forecast", str(SEED))
    assert code == 0, err
    order = [
        "= Quote (on-demand list)",
        "Spot and commitment savings",
        "= Planned",
        "= Real bill (forecast)",
        "= Budget (P90 of simulated runs)",
        "What to do",
        "1. Run all 32 nodes on spot",
    ]
    positions = [out.index(s) for s in order]
    assert positions == sorted(positions)
    assert "$226,529" in out
    assert "$142,825" in out
    assert "-$83,704" in out
    assert "$0.30" in out  # CloudWatch metric-month, not "$0.3"
    assert "caveat:" in out


def test_savings_plan_action_tries_the_published_kind(catalog: Catalog) -> None:
    """p5en has only a published 3yr EC2 Instance SP ($23.80, AWS SP price file 20261003071546, in
    the packaged catalog): over its 26,280 h term 4 nodes save 4 × 26,280 × ($63.296 − $23.80)
    = $4,151,819.52."""
    raw = zero_hidden_plan(instance="p5en.48xlarge")
    raw["run"] = {"name": "three-years", "hours": 26_280}
    raw["prices"] = {"as_of": "2026-12-01"}
    fc = _advised(plan_from_dict(raw), catalog)
    assert fc.outlook is not None
    sp = next(a for a in fc.outlook.actions if a.kind == "savings_plan")
    assert sp.saving_usd == pytest.approx(4 * 26_280 * (63.296 - 23.80))
    assert sp.change["purchase.savings_plan_kind"] == "ec2-instance"
    assert "EC2 Instance Savings Plan" in sp.title


def test_calibrated_forecast_prices_its_actions_with_the_measured_mfu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --calibration the budget and the actions are priced with the measured MFU; the
    planner's node-count search has none, so right-size takes the node-count sweep, priced
    with it (and says so), rather than being left out."""
    cal = tmp_path / "profile.toml"
    cal.write_text(PROFILE_TOML, encoding="utf-8")
    code, out, err = run_cli(
        capsys,
        "forecast",
        "--params",
        "7e9",
        "--tokens",
        "1e11",
        "--instance",
        "p5.48xlarge",
        "--nodes",
        "8",
        "--as-of",
        "2025-05-01",
        "--calibration",
        str(cal),
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["budget_usd"] >= d["total_usd"]
    assert d["actions"], d["action_notes"]
    assert not any(n.startswith("right size") for n in d["action_notes"])
    for a in d["actions"]:
        if a["kind"] == "right_size":
            assert "priced with the measured MFU" in a["caveat"]


def test_each_calibrated_action_is_its_variant_forecast_with_the_calibration(
    catalog: Catalog,
) -> None:
    """Every action's total is the calibrated forecast of the plan with the action's change
    applied (one calibration rule for the plan and its variants), and not the uncalibrated
    one: the measured MFU 40% of PROFILE_TOML against the modelled efficiency. With a
    500-hour deadline a smaller cluster fits, so right-size (the node-count sweep, priced with
    the measured MFU) is among them."""
    from trainbill.calibration import calibrate, forecast_calibrated, parse_calibration

    raw: dict[str, Any] = {
        "run": {"deadline_hours": 500},
        "model": {"params": 7e9, "tokens": 1e11},
        "cluster": {"instance": "p5.48xlarge", "nodes": 8},
        "prices": {"as_of": "2025-05-01"},
    }
    cals = [parse_calibration(PROFILE_TOML, source="profile.toml")]
    plan = plan_from_dict(raw)
    fc = forecast_calibrated(plan, catalog, cals, today=TODAY)
    advised = advise(plan, fc, calibrate(plan, catalog, cals).catalog, today=TODAY,
                     calibrations=cals)  # fmt: skip
    assert advised.outlook is not None
    assert "right_size" in {a.kind for a in advised.outlook.actions}
    for action in advised.outlook.actions:
        changed = {section: dict(values) for section, values in raw.items()}
        for key, value in action.change.items():
            section, name = key.split(".", 1)
            changed.setdefault(section, {})[name] = value
        variant = plan_from_dict(changed)
        priced = forecast_calibrated(variant, catalog, cals, today=TODAY)
        assert action.total_usd == pytest.approx(priced.total_usd, rel=1e-12), action.kind
        assert action.saving_usd == pytest.approx(fc.total_usd - priced.total_usd, rel=1e-9)
        assert priced.total_usd != pytest.approx(
            forecast(variant, catalog, today=TODAY).total_usd, rel=1e-3
        )


def test_the_all_spot_action_says_the_savings_plan_goes_with_it(catalog: Catalog) -> None:
    """4 × p5en.48xlarge, half on spot, a bought 3-yr EC2 Instance Savings Plan covering half the
    on-demand nodes: with every node on spot it would cover nothing, so the variant buys none,
    and most of the saving is its 26,280-hour term: the title says so."""
    plan = plan_from_dict(
        {
            "run": {"hours": 100},
            "model": {"params": 7e9},
            "cluster": {"instance": "p5en.48xlarge", "nodes": 4},
            "prices": {"as_of": "2026-12-01"},
            "purchase": {
                "savings_plan": "3yr",
                "savings_plan_coverage": 0.5,
                "spot_fraction": 0.5,
                "savings_plan_kind": "ec2-instance",
            },
        }
    )
    fc = _advised(plan, catalog)
    assert fc.outlook is not None
    (spot,) = [a for a in fc.outlook.actions if a.kind == "spot"]
    assert spot.title.startswith("Run all 4 nodes on spot (the plan: 2), without the 3yr")


def test_an_action_carries_the_warnings_of_the_plan_it_proposes(catalog: Catalog) -> None:
    """Was: "Run all 16 nodes on spot" on the HyperPod example said nothing of the rate it is
    priced at, while forecasting that plan warns that no HyperPod Spot rate is published (the
    EC2 Spot rate stands in). The caveat now holds every warning the proposed plan's forecast
    adds to the plan's own."""
    plan = load_plan(EXAMPLES / "hyperpod-finetune.toml")
    fc = advise(plan, forecast(plan, catalog, today=TODAY), catalog, today=TODAY, trials=200)
    assert fc.outlook is not None
    spot = next(a for a in fc.outlook.actions if a.kind == "spot")
    assert "no published HyperPod Spot rate" in spot.caveat
    variant = plan.model_copy(
        update={"purchase": plan.purchase.model_copy(update={"spot_fraction": 1.0})}
    )
    added = set(forecast(variant, catalog, today=TODAY).usage.warnings) - set(
        fc.forecast.usage.warnings
    )
    assert added
    assert all(w in spot.caveat for w in added)


def test_the_p90_margin_says_when_it_holds_the_time_models_error(catalog: Catalog) -> None:
    """Was "P90 margin (failures, reclaims, stragglers)" on a plan whose modelled hours put most
    of the margin in the time model's own error. A modelled plan names it; the seed, whose hours
    are stated, does not."""
    modelled = load_plan(EXAMPLES / "pretrain-512-h100.toml")
    for plan, said in ((modelled, True), (load_plan(SEED), False)):
        fc = advise(plan, forecast(plan, catalog, today=TODAY), catalog, today=TODAY, trials=200)
        (margin,) = [s.label for s in fc.waterfall() if s.label.startswith("P90 margin")]
        assert ("time-model error" in margin) is said
