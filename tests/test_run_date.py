"""Run date apart from price date, price history back to launch, and the Young/Daly interval."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from conftest import run_cli
from trainbill.catalog import Catalog
from trainbill.errors import PriceNotFoundError
from trainbill.forecasting import forecast
from trainbill.spec import plan_from_dict
from trainbill.usage import failures_per_hour, usage_for, young_daly_interval_hours

TODAY = date(2026, 12, 3)


def _plan(**sections: dict[str, Any]) -> Any:
    """Two p4d nodes (16 A100s) for 100 h of pure training, with a 720 GB checkpoint."""
    base: dict[str, dict[str, Any]] = {
        "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
        "run": {"hours": 100},
        "checkpoint": {"size_gb": 720},
    }
    for name, values in sections.items():
        base[name] = {**base.get(name, {}), **values}
    return plan_from_dict(base)


# --- Young/Daly checkpoint interval ---------------------------------------------------------


def test_young_interval_formula() -> None:
    """sqrt(2 · δ · M): δ = 0.05 h, M = 10 h → sqrt(1) = 1 h; δ = 180 s, M = 125 h → sqrt(12.5) =
    3.54 h."""
    assert young_daly_interval_hours(0.05, 10.0) == pytest.approx(1.0)
    assert young_daly_interval_hours(180 / 3600, 125.0) == pytest.approx(3.5355, abs=1e-4)


def test_cluster_failure_rate_is_per_gpu_rate_times_gpus() -> None:
    """Llama 3 405B: 4.74e-4 per GPU-day × 16,384 GPUs / 24 = 0.3236 per hour (one per ~3.09 h)."""
    assert failures_per_hour(4.74e-4, 16_384) == pytest.approx(0.32358, abs=1e-5)
    assert 1.0 / failures_per_hour(4.74e-4, 16_384) == pytest.approx(3.090, abs=1e-3)


def test_default_interval_is_young_optimum(catalog: Catalog) -> None:
    """Write 720 GB at 2 GB/s/node × 2 nodes = 4 GB/s: δ = 180 s = 0.05 h. Failures 0.15/GPU-day ×
    16 GPUs / 24 = 0.1/h: M = 10 h. Interval sqrt(2 × 0.05 × 10) = 1 h, so 100 h / 1 h = 100
    checkpoints stalling 100 × 0.05 = 5 h; the interval is listed as assumed."""
    u = usage_for(_plan(reliability={"gpu_failure_rate_per_gpu_day": 0.15}), catalog, today=TODAY)
    assert u.checkpoint.stall_hours_each == pytest.approx(0.05)
    assert u.checkpoint.interval_hours == pytest.approx(1.0)
    assert u.checkpoint.interval_optimum_hours == pytest.approx(1.0)
    assert u.checkpoint.count == pytest.approx(100.0)
    assert u.checkpoint.stall_hours == pytest.approx(5.0)
    assert any(
        a.startswith("checkpoint.interval_hours = 1 h: Young/Daly optimum") for a in u.assumed
    )
    # Each failure loses half the interval plus the ec2 restart: 1 / 2 + 1 = 1.5 h.
    assert u.reliability.failure_lost_hours == pytest.approx(u.reliability.failure_events * 1.5)


def test_stated_interval_wins_and_optimum_is_shown(catalog: Catalog) -> None:
    """A stated 2 h interval is used (100 / 2 = 50 checkpoints); the 1 h optimum is still
    reported."""
    plan = _plan(
        reliability={"gpu_failure_rate_per_gpu_day": 0.15}, checkpoint={"interval_hours": 2}
    )
    u = usage_for(plan, catalog, today=TODAY)
    assert (u.checkpoint.interval_hours, u.checkpoint.count) == (2, 50)
    assert u.checkpoint.interval_optimum_hours == pytest.approx(1.0)
    assert u.checkpoint.interval_basis.startswith("2 h stated in the plan; Young/Daly optimum")
    assert not any(a.startswith("checkpoint.interval_hours") for a in u.assumed)


def test_optimum_capped_at_catalog_interval(catalog: Catalog) -> None:
    """Rare failures: 0.0015/GPU-day × 16 / 24 = 0.001/h, M = 1000 h, sqrt(2 × 0.05 × 1000) = 10 h,
    capped at defaults.checkpoint.interval_hours = 2 h (checkpoints also serve rollbacks)."""
    u = usage_for(_plan(reliability={"gpu_failure_rate_per_gpu_day": 0.0015}), catalog, today=TODAY)
    assert u.checkpoint.interval_hours == pytest.approx(2.0)
    assert "capped at defaults.checkpoint.interval_hours" in u.checkpoint.interval_basis


def test_no_failures_uses_catalog_interval(catalog: Catalog) -> None:
    """With no interruptions Young's optimum is unbounded: the catalog's 2 h is used, never
    infinity."""
    u = usage_for(_plan(reliability={"gpu_failure_rate_per_gpu_day": 0}), catalog, today=TODAY)
    assert u.checkpoint.interval_hours == 2.0
    assert u.checkpoint.interval_optimum_hours is None


def test_explain_shows_optimum_beside_stated_interval(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    """--explain prints the stated interval with the optimum next to it, and both dates."""
    plan = tmp_path / "plan.toml"
    plan.write_text(
        "[cluster]\ninstance='p4d.24xlarge'\nnodes=2\n[run]\nhours=100\ndate=2023-01-10\n[checkpoint]\nsize_gb=720\ninterval_hours=2\n[reliability]\ngpu_failure_rate_per_gpu_day=0.15\n[prices]\nas_of=2023-03-15\n"
    )
    code, out, err = run_cli(capsys, "forecast", str(plan), "--explain")
    assert code == 0, err
    flat = " ".join(out.split())
    assert (
        "2 h stated in the plan; Young/Daly optimum sqrt(2 × 180 s write stall × 10 h cluster "
        "MTBF) = 1 h" in flat
    )
    assert "run date (software maturity, run.date / --run-date): 2023-01-10" in flat
    assert "price date (prices.as_of / --as-of): 2023-03-15" in flat


# --- run date and price date ----------------------------------------------------------------


def test_run_date_precedence(catalog: Catalog) -> None:
    """run.date wins; without it the price date; without both, today."""
    both = usage_for(
        _plan(run={"date": "2022-01-01"}, prices={"as_of": "2023-03-15"}), catalog, today=TODAY
    )
    price_only = usage_for(_plan(prices={"as_of": "2023-03-15"}), catalog, today=TODAY)
    neither = usage_for(_plan(), catalog, today=TODAY)
    assert (both.run_date, both.as_of) == (date(2022, 1, 1), date(2023, 3, 15))
    assert (price_only.run_date, price_only.as_of) == (date(2023, 3, 15), date(2023, 3, 15))
    assert (neither.run_date, neither.as_of) == (TODAY, TODAY)


def test_run_date_sets_software_maturity(catalog: Catalog) -> None:
    """a100-40gb launched 2020-05-14; run.date 2023-03-15 is 1,035 days later = 1035 / 365.25 = 2.83
    years, whatever the price date (2026-12-03 here)."""
    plan = plan_from_dict({
        "model": {"params": 13e9, "tokens": 1e11},
        "cluster": {"instance": "p4d.24xlarge", "nodes": 8},
        "run": {"date": "2023-03-15"},
    })  # fmt: skip
    u = usage_for(plan, catalog, today=TODAY)
    maturity = dict(u.time.factors)["maturity"]
    assert "2.83 years before the run" in maturity


def test_run_date_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """--run-date reaches the plan; the JSON states both dates."""
    code, out, err = run_cli(
        capsys, "forecast", "--instance", "p4d.24xlarge", "--nodes", "2", "--hours", "10",
        "--as-of", "2024-03-01", "--run-date", "2023-06-01", "--json",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["run_date"], doc["catalog"]["as_of"]) == ("2023-06-01", "2024-03-01")


def test_bad_run_date_flag_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed --run-date names the flag."""
    code, _, err = run_cli(
        capsys,
        "forecast",
        "--instance",
        "p4d.24xlarge",
        "--nodes",
        "2",
        "--hours",
        "1",
        "--run-date",
        "spring",
    )
    assert (code, err.strip()) == (
        1,
        "trainbill: error: command line: --run-date: 'spring' is not a date (YYYY-MM-DD)",
    )


# --- price history back to launch ------------------------------------------------------------


def test_p4d_priced_in_2023(catalog: Catalog) -> None:
    """p4d on 2023-03-15: the launch price $32.7726/h (AWS launch post, 2020-11-02), 64 nodes."""
    plan = plan_from_dict({
        "model": {"params": 13e9, "tokens": 1e12},
        "cluster": {"instance": "p4d.24xlarge", "nodes": 64},
        "prices": {"as_of": "2023-03-15"},
    })  # fmt: skip
    fc = forecast(plan, catalog, today=TODAY)
    compute = fc.ledger.in_category("compute")[0]
    assert compute.unit_price_usd == 32.7726
    assert "effective 2020-11-02" in compute.source
    assert fc.quote_usd == pytest.approx(64 * 32.7726 * fc.usage.compute.hours)


def test_p5_launch_price(catalog: Catalog) -> None:
    """p5.48xlarge on its GA day 2023-07-26: $98.32/h."""
    p = catalog.price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=date(2023, 7, 26)
    )
    assert (p.usd, p.effective_from) == (98.32, date(2023, 7, 26))


def test_public_ipv4_was_free_before_2024(catalog: Catalog) -> None:
    """In-use public IPv4 cost nothing until AWS's charge of $0.005/h began on 2024-02-01."""
    kw: dict[str, Any] = {"provider": "aws", "region": "us-east-1"}
    assert catalog.price("ipv4.hours", "on_demand", **kw, as_of=date(2024, 1, 31)).usd == 0.0
    assert catalog.price("ipv4.hours", "on_demand", **kw, as_of=date(2024, 2, 1)).usd == 0.005


def test_every_pre_2024_instance_priced_at_launch(catalog: Catalog) -> None:
    """Each instance with a launch date before 2024 has an on-demand price on its launch day."""
    early = [
        i
        for i in catalog.instances.values()
        if i.launched is not None and i.launched < date(2024, 1, 1)
    ]
    assert len(early) >= 10
    for inst in early:
        regions = catalog.regions(inst.provider)
        points = [
            p
            for r in regions
            for p in catalog.history(inst.instance, "on_demand", provider=inst.provider, region=r)
        ]
        assert points, inst.instance
        assert min(p.effective_from for p in points) <= inst.launched, inst.instance


def test_as_of_before_launch_is_an_error(catalog: Catalog) -> None:
    """Before the instance was sold: an error naming the instance, its launch date and the field."""
    with pytest.raises(PriceNotFoundError) as exc:
        forecast(_plan(prices={"as_of": "2019-03-15"}), catalog, today=TODAY)
    assert str(exc.value) == (
        "p4d.24xlarge was not sold on 2019-03-15: it launched on 2020-11-02 (catalog "
        "instances.csv, launched). To fix: use [prices] as_of (--as-of) on or after 2020-11-02, "
        "or an instance sold on that day."
    )


def test_must_show_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's command prices a 2023 p4d run instead of failing on 2024-only price history."""
    code, out, err = run_cli(
        capsys,
        "forecast",
        "--instance",
        "p4d.24xlarge",
        "--nodes",
        "64",
        "--params",
        "13e9",
        "--tokens",
        "1e12",
        "--as-of",
        "2023-03-15",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["lines"][0]["unit_price_usd"] == 32.7726


def test_run_date_before_accelerator_launch_warns(catalog: Catalog) -> None:
    """run.date 2019-06-01 precedes the A100 (2020-05-14) by 348 days = 0.95 years: a warning naming
    run.date and the launch."""
    plan = plan_from_dict({
        "model": {"params": 1e9, "tokens": 1e10},
        "cluster": {"instance": "p4d.24xlarge", "nodes": 1},
        "run": {"date": "2019-06-01"}, "prices": {"as_of": "2023-03-15"},
    })  # fmt: skip
    fc = forecast(plan, catalog, today=TODAY)
    assert any(
        w.startswith(
            "run.date (default prices.as_of) is 0.95 years before a100-40gb launched (2020-05-14"
        )
        for w in fc.warnings
    ), fc.warnings


def test_run_date_long_after_prices_warns(catalog: Catalog) -> None:
    """run.date 2025-06-01 is 809 days = 2.2 years after prices.as_of 2023-03-15: both fields
    named."""
    fc = forecast(
        _plan(run={"date": "2025-06-01"}, prices={"as_of": "2023-03-15"}), catalog, today=TODAY
    )
    assert any(
        w.startswith("run.date 2025-06-01 is 2.2 years after prices.as_of 2023-03-15")
        for w in fc.warnings
    ), fc.warnings


def test_as_of_beyond_price_horizon_warns(catalog: Catalog) -> None:
    """2099-01-01 is past the catalog snapshot and today: the newest prices are carried forward,
    said so."""
    fc = forecast(_plan(prices={"as_of": "2099-01-01"}), catalog, today=TODAY)
    assert any(
        w.startswith("prices.as_of 2099-01-01 is beyond the price data") for w in fc.warnings
    ), fc.warnings
