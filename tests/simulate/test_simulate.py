"""Monte Carlo: exact pricing through the cost drivers, reproducibility, studies, bad input.
The command line is tested in ``tests/cli/test_simulate.py``."""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainbill.simulate as simmod
from conftest import EXAMPLES, SEED, TODAY, zero_hidden_plan
from trainbill.catalog import Catalog, load_catalog
from trainbill.errors import SimulationError
from trainbill.forecasting import forecast_usage
from trainbill.simulate import (
    BLOCK,
    MAX_TRIALS,
    SimulationParams,
    checkpoint_study,
    simulate,
    spot_comparison,
    spot_range_of_on_demand,
    young_daly_interval,
)
from trainbill.spec import load_plan, plan_from_dict
from trainbill.usage import Usage, usage_for

P4D_PLAN = EXAMPLES / "p4d-spot-experiment.toml"


@functools.cache
def _packaged() -> Catalog:
    return load_catalog()


def _usage(catalog: Catalog, path: Path = SEED) -> Usage:
    return usage_for(load_plan(path), catalog, today=TODAY)


def test_trials_priced_exactly_like_forecast(catalog: Catalog) -> None:
    """A sample of trials re-priced by forecast_usage(replace(usage, ...)) matches to 1e-9
    relative."""
    usage = _usage(catalog)
    sim = simulate(usage, catalog, trials=600, rng=11, keep_samples=True)
    assert sim.samples is not None
    # Pick trials with disruptions so the check covers every perturbed field.
    q = sim.samples.quantities
    picks = {
        0,
        int(np.argmax(q[:, 2])),
        int(np.argmax(q[:, 4])),
        int(np.argmax(sim.samples.cost_usd)),
    }
    assert q[:, 2].max() >= 1
    assert q[:, 4].max() >= 1
    for i in sorted(picks):
        trial = sim.samples.usage(usage, i)
        assert trial.purchase.spot_price_scale == sim.samples.spot_scale[i]
        direct = forecast_usage(trial, catalog).total_usd
        assert sim.samples.cost_usd[i] == pytest.approx(direct, rel=1e-9)
        assert sim.samples.wall_hours[i] == pytest.approx(trial.wall_hours, rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(
    nodes=st.integers(1, 64),
    hours=st.floats(1.0, 500.0),
    spot=st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    interval=st.floats(0.25, 8.0),
    size_gb=st.floats(1.0, 2000.0),
    orchestrator=st.sampled_from(["ec2", "eks", "hyperpod"]),
)
def test_zero_rates_equal_forecast(
    nodes: int, hours: float, spot: float, interval: float, size_gb: float, orchestrator: str
) -> None:
    """Every rate and spread at zero: every trial costs exactly the deterministic forecast."""
    catalog = _packaged()
    d: dict[str, Any] = zero_hidden_plan(nodes=nodes, orchestrator=orchestrator)
    d["run"]["hours"] = hours
    d["purchase"] = {"spot_fraction": spot}
    d["checkpoint"] = {"interval_hours": interval, "size_gb": size_gb}
    usage = usage_for(plan_from_dict(d), catalog, today=TODAY)
    params = SimulationParams.from_usage(usage, catalog).quiet()
    sim = simulate(usage, catalog, trials=50, rng=3, params=params)
    det = forecast_usage(usage, catalog).total_usd
    assert sim.deterministic_total_usd == det
    for v in sim.cost_usd.as_dict().values():
        assert v == det
    for v in sim.wall_hours.as_dict().values():
        assert v == usage.wall_hours


def test_mean_matches_analytic_expectation(catalog: Catalog) -> None:
    """Seed example: simulated mean within 4 standard errors of the analytic expected bill."""
    sim = simulate(_usage(catalog), catalog, trials=20_000, rng=5)
    assert abs(sim.cost_usd.mean - sim.expected_total_usd) < 4 * sim.cost_se_usd
    # The expectation is not the deterministic forecast: throttling adds stall on top.
    assert sim.expected_total_usd > sim.deterministic_total_usd


def test_failure_counts_match_hand_computed_rate(catalog: Catalog) -> None:
    """4 × p5 (32 GPUs), 10 h, 0.01 failures/GPU-day: E[N] = 0.01 × 32 × 10 / 24 = 0.1333.

    Each failure loses U(0, 2 h) of work (mean 1 h) plus a 1 h restart:
    E[lost] = 0.1333 × 2 = 0.2667 h.
    """
    d = zero_hidden_plan()
    d["reliability"]["gpu_failure_rate_per_gpu_day"] = 0.01
    d["reliability"]["restart_hours"] = 1.0
    usage = usage_for(plan_from_dict(d), catalog, today=TODAY)
    p = replace(SimulationParams.from_usage(usage, catalog), throttle_rate_per_gpu_hour=0.0)
    n = 40_000
    sim = simulate(usage, catalog, trials=n, rng=9, params=p)
    expected_n = 0.01 * 32 * 10 / 24
    assert abs(sim.mean_events["failures"] - expected_n) < 4 * math.sqrt(expected_n / n)
    # Var of lost hours per trial = λ·E[X²], X = 2U + R: E[X²] ≈ 4/3 + 2 + 1.25 < 5.
    assert abs(sim.mean_events["failure_lost_hours"] - 2 * expected_n) < 4 * math.sqrt(
        expected_n * 5 / n
    )


def test_same_seed_same_results_and_chunking_irrelevant(catalog: Catalog) -> None:
    """Same seed ⇒ identical trials; chunk size (1 block vs all blocks at once) changes nothing."""
    usage = _usage(catalog)
    trials = 2 * BLOCK + 123
    a = simulate(usage, catalog, trials=trials, rng=42, chunk_size=BLOCK, keep_samples=True)
    b = simulate(usage, catalog, trials=trials, rng=42, chunk_size=10 * BLOCK, keep_samples=True)
    c = simulate(usage, catalog, trials=trials, rng=43, keep_samples=True)
    assert a.samples is not None
    assert b.samples is not None
    assert c.samples is not None
    assert np.array_equal(a.samples.cost_usd, b.samples.cost_usd)
    assert np.array_equal(a.samples.quantities, b.samples.quantities)
    assert a.cost_usd == b.cost_usd
    assert a.wall_hours == b.wall_hours
    assert a.by_category_mean_usd == pytest.approx(b.by_category_mean_usd, rel=1e-12)
    assert not np.array_equal(a.samples.cost_usd, c.samples.cost_usd)


def test_category_means_add_up_to_total_mean(catalog: Catalog) -> None:
    """Mean by category sums to the mean total (both linear in the same sampled deviations)."""
    sim = simulate(_usage(catalog), catalog, trials=3000, rng=2)
    assert sum(sim.by_category_mean_usd.values()) == pytest.approx(sim.cost_usd.mean, rel=1e-9)


def test_deadline_miss_probability(catalog: Catalog) -> None:
    """Deadline below the shortest possible run (pure compute 10 h) is always missed; far above
    never."""
    usage = usage_for(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    assert (
        simulate(usage, catalog, trials=100, rng=1, deadline_hours=9.0).deadline_miss_probability
        == 1.0
    )
    assert (
        simulate(usage, catalog, trials=100, rng=1, deadline_hours=1e6).deadline_miss_probability
        == 0.0
    )
    assert simulate(usage, catalog, trials=100, rng=1).deadline_miss_probability is None


def test_young_daly_hand_computed(catalog: Catalog) -> None:
    """δ = 0.1 h, 32 GPUs × 0.024/GPU-day = 0.032/h ⇒ MTBF 31.25 h,
    τ = sqrt(2 × 0.1 × 31.25) = 2.5 h."""
    usage = usage_for(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY).with_values(
        {"checkpoint.stall_hours_each": 0.1}
    )
    p = replace(SimulationParams.from_usage(usage, catalog), failure_rate_per_gpu_day=0.024)
    assert young_daly_interval(usage, p) == pytest.approx(2.5)
    assert young_daly_interval(usage, p.quiet()) is None


def test_checkpoint_study_seed_example(catalog: Catalog) -> None:
    """The simulated optimum is on the grid, no worse than the plan's 2 h, and near Young/Daly."""
    study = checkpoint_study(_usage(catalog), catalog, trials=2000, rng=4)
    assert study is not None
    assert study.young_daly_hours is not None
    assert study.plan_interval_hours == 2.0
    assert study.simulated_optimum_hours in {row[0] for row in study.grid}
    assert study.optimum_mean_usd <= study.plan_mean_usd
    assert study.young_daly_hours / 2 <= study.simulated_optimum_hours <= study.young_daly_hours * 2


def test_async_checkpoint_stall_is_snapshot_only(catalog: Catalog) -> None:
    """140 GB on 4 nodes: sync 140/(4 × 2 GB/s) = 17.5 s per write; async 140/(4 × 50) = 0.7 s.

    A 25× cheaper checkpoint shortens the Young/Daly interval by sqrt(25) = 5×.
    """
    d = zero_hidden_plan()
    d["reliability"]["gpu_failure_rate_per_gpu_day"] = 0.01
    # S3 (a multipart upload from every node): an EBS volume would cap the 2 GB/s per node.
    d["checkpoint"] = {"size_gb": 140, "target": "s3"}
    sync = usage_for(plan_from_dict(d), catalog, today=TODAY)
    d["checkpoint"]["asynchronous"] = True
    asyn = usage_for(plan_from_dict(d), catalog, today=TODAY)
    assert sync.checkpoint.stall_hours_each * 3600 == pytest.approx(17.5)
    assert asyn.checkpoint.stall_hours_each * 3600 == pytest.approx(0.7)
    s_study = checkpoint_study(sync, catalog, trials=300, rng=1)
    a_study = checkpoint_study(asyn, catalog, trials=300, rng=1)
    assert s_study is not None
    assert a_study is not None
    assert a_study.asynchronous
    assert s_study.young_daly_hours is not None
    assert a_study.young_daly_hours is not None
    assert s_study.young_daly_hours / a_study.young_daly_hours == pytest.approx(5.0)


def test_p4d_spot_experiment_savings(catalog: Catalog) -> None:
    """The article's p4d run: spot at 65-75% of on-demand promises 30% savings; reclaims keep ~29%.

    Hand estimate: 8 spot nodes × 0.001/node-hour × ~336 h = 2.7 reclaims × 1.5 h = 4 h lost,
    i.e. 1.2% more spot hours: savings ≈ 1 − 0.70 × 1.012 = 29.2% — not the article's 11%.
    """
    usage = _usage(catalog, P4D_PLAN)
    lo, hi = spot_range_of_on_demand(usage, catalog, 0.65, 0.75)
    p = replace(SimulationParams.from_usage(usage, catalog), spot_price_low=lo, spot_price_high=hi)
    cmp = spot_comparison(usage, catalog, trials=4000, rng=1, params=p)
    assert cmp is not None
    assert cmp.nominal_savings == pytest.approx(0.30, abs=0.01)
    assert 0.27 < cmp.expected_savings < cmp.nominal_savings
    assert cmp.p90_savings < cmp.expected_savings


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trials": 0}, "trials must be a positive integer"),
        ({"trials": -5}, "trials must be a positive integer"),
        ({"trials": MAX_TRIALS + 1}, "at most 10,000,000"),
        ({"trials": 10, "chunk_size": 0}, "chunk_size must be a positive integer"),
        ({"trials": 10, "rng": -1}, "seed must be a non-negative integer"),
        ({"trials": 10, "deadline_hours": -1.0}, "deadline_hours must be > 0"),
    ],
)
def test_bad_run_arguments(catalog: Catalog, kwargs: dict[str, Any], message: str) -> None:
    """Trial counts, chunk size, seed and deadline out of range raise SimulationError."""
    usage = usage_for(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    with pytest.raises(SimulationError, match=message):
        simulate(usage, catalog, **kwargs)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"failure_rate_per_gpu_day": -0.1}, "failure_rate_per_gpu_day: must be >= 0"),
        ({"spot_reclaim_rate_per_node_hour": 1.5}, "probability must be <= 1"),
        ({"throttle_slowdown": 2.0}, "throttle_slowdown: a fraction must be <= 1"),
        ({"restart_cv": float("nan")}, "restart_cv: must be a finite number"),
        ({"spot_price_low": 1.3, "spot_price_high": 1.1}, "spot_price_low .* > spot_price_high"),
        ({"no_such_rate": 1.0}, "unknown simulation parameter"),
    ],
)
def test_bad_parameters(catalog: Catalog, override: dict[str, float], message: str) -> None:
    """Negative rates, probabilities above 1, inverted ranges and unknown names are refused."""
    usage = usage_for(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    with pytest.raises(SimulationError, match=message):
        SimulationParams.from_usage(usage, catalog, **override)


def test_trials_across_a_kink_are_priced_like_forecast(catalog: Catalog) -> None:
    """Retained S3 checkpoints = min(keep_last, checkpoints): trials either side of the kink
    (time-model error moves the count around keep_last) cost what forecast_usage says."""
    d = zero_hidden_plan()
    del d["run"]["hours"]
    d["model"] = {"params": 7e9, "tokens": 2e10}
    d["checkpoint"] = {"target": "s3", "keep_last": 5, "size_gb": 100.0}
    probe = usage_for(plan_from_dict(d), catalog, today=TODAY)
    # An interval giving 5 checkpoints at the forecast's hours: a trial k x longer writes 5k.
    d["checkpoint"]["interval_hours"] = probe.compute.hours / 5.0
    usage = usage_for(plan_from_dict(d), catalog, today=TODAY)
    sim = simulate(usage, catalog, trials=400, rng=4, keep_samples=True)
    assert sim.samples is not None
    count = sim.samples.quantities[:, simmod.PERTURBED.index("checkpoint.count")]
    below, above = int(np.argmin(count)), int(np.argmax(count))
    assert count[below] < 5 < count[above]
    for i in (below, above):
        direct = forecast_usage(sim.samples.usage(usage, i), catalog).total_usd
        assert sim.samples.cost_usd[i] == pytest.approx(direct, rel=1e-12)


def test_progress_reports_every_chunk(catalog: Catalog) -> None:
    """3 blocks in chunks of one block: progress sees 4096, 8192, then all 8292 trials."""
    usage = usage_for(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    seen: list[tuple[int, int]] = []
    simulate(
        usage,
        catalog,
        trials=2 * BLOCK + 100,
        rng=1,
        chunk_size=1,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert seen == [(4096, 8292), (8192, 8292), (8292, 8292)]


def test_the_time_model_error_is_sampled_for_modelled_hours(catalog: Catalog) -> None:
    """A plan whose hours the model predicts: each trial's hours × a two-piece lognormal whose
    P10/P50/P90 are time.error_band's for the cluster's size; with every other source of noise
    off, wall-clock quantiles are the band's. (One lognormal through P10 and P90 put the median at
    sqrt(P10 × P90) = 1.11 where the residuals' median is 1.01.)"""
    plan = plan_from_dict(
        {
            "model": {"params": 7e9, "tokens": 2e11},
            "cluster": {"gpu": "h100", "gpus": 64},
            "prices": {"as_of": "2025-05-01"},
        }
    )
    usage = usage_for(plan, catalog, today=TODAY)
    # 64 GPUs: the band of clusters of up to 128 GPUs (time.error_band.small_cluster_*).
    lo = float(catalog.value("time.error_band.small_cluster_p10"))
    mid = float(catalog.value("time.error_band.small_cluster_p50"))
    hi = float(catalog.value("time.error_band.small_cluster_p90"))
    p = SimulationParams.from_usage(usage, catalog)
    # A two-piece lognormal through the three quantiles: median = mid; each side's log-sd =
    # ln(ratio) / 1.2815515655 (the normal 90th percentile).
    z90 = 1.2815515655446004
    assert p.time_error_median == pytest.approx(mid)
    assert p.time_error_sigma_low == pytest.approx(math.log(mid / lo) / z90)
    assert p.time_error_sigma_high == pytest.approx(math.log(hi / mid) / z90)
    noisy_time_only = replace(
        p.quiet(),
        time_error_median=p.time_error_median,
        time_error_sigma_low=p.time_error_sigma_low,
        time_error_sigma_high=p.time_error_sigma_high,
    )
    sim = simulate(usage, catalog, trials=200_000, rng=3, params=noisy_time_only)
    # No failures, reclaims, throttling or spread: wall = k × the forecast's wall-clock.
    assert sim.wall_hours.p10 == pytest.approx(lo * usage.wall_hours, rel=0.01)
    assert sim.wall_hours.p50 == pytest.approx(mid * usage.wall_hours, rel=0.01)
    assert sim.wall_hours.p90 == pytest.approx(hi * usage.wall_hours, rel=0.01)
    # The mean: m (e^(σl²/2) Φ(−σl) + e^(σh²/2) Φ(σh)), the sampled mean within 1%.
    sl, sh = math.log(mid / lo) / z90, math.log(hi / mid) / z90
    phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
    mean = mid * (math.exp(sl * sl / 2) * phi(-sl) + math.exp(sh * sh / 2) * phi(sh))
    assert p.time_error_mean == pytest.approx(mean)
    assert sim.wall_hours.mean == pytest.approx(mean * usage.wall_hours, rel=0.01)


def test_stated_hours_carry_no_time_model_error(catalog: Catalog) -> None:
    """The seed example states its 72 h: no time-model spread is sampled."""
    usage = usage_for(load_plan(SEED), catalog, today=TODAY)
    p = SimulationParams.from_usage(usage, catalog)
    assert (p.time_error_median, p.time_error_sigma_low, p.time_error_sigma_high) == (1, 0, 0)


def test_the_simulated_checkpoint_optimum_keeps_the_forecast_s_ceiling(catalog: Catalog) -> None:
    """The seed plan's Young/Daly interval, sqrt(2 × 0.0454 h stall × 125.3 h MTBF) = 3.37 h, is
    above the 2 h the forecast never exceeds (defaults.checkpoint.interval_hours: rollbacks
    after loss spikes): the study's optimum stays within it, as the forecast's does, while the
    grid still shows the longer intervals."""
    study = checkpoint_study(load_plan(SEED), catalog, trials=300, rng=1, today=TODAY)
    assert study is not None
    assert study.young_daly_hours is not None
    assert study.young_daly_hours > 2.0
    assert study.simulated_optimum_hours <= 2.0
    assert any(row[0] > 2.0 for row in study.grid)
