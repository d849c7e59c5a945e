"""Evaluation passes: forward-only steps priced at the cluster rate, in the run's hours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import SEED, TODAY, h100_maturity, run_argv, seed_step_seconds, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import forecast
from trainbill.spec import load_plan, plan_from_dict


def _eval_lines(fc: Any) -> list[Any]:
    return list(fc.ledger.in_category("evaluation"))


def test_seed_example_uses_megatron_defaults(catalog: Catalog) -> None:
    """72 h × (100 eval steps / 1,000 steps) × (compute / 3) / (compute + host) ≈ 2.342
    cluster-hours.

    The plan gives hours and a model size (70e9) but no tokens: the time model models one
    step (``seed_step_seconds``: ≈ 12.14 s compute + 0.30 s host), and an eval step is a
    third of its kernel time with no host overhead. (It was a plain third, 2.4 h, while the
    step was not modelled for plans without tokens.) Rate: 32 nodes × (½ × $98.32 on-demand +
    ½ × $25.66 spot) = $1,983.68 per cluster-hour.
    """
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    (line,) = _eval_lines(fc)
    compute_s, host_s = seed_step_seconds(catalog)
    hours = 72 * 100 / 1000 * (compute_s / 3) / (compute_s + host_s)
    assert line.quantity == pytest.approx(hours, rel=1e-9)
    assert line.unit_price_usd == pytest.approx(32 * (0.5 * 98.32 + 0.5 * 25.66))
    assert line.cost_usd == pytest.approx(hours * 1983.68)
    assert any("Megatron-LM default --eval-interval 1000" in a for a in fc.usage.assumed)


def test_plan_cadence_hand_computed(catalog: Catalog) -> None:
    """50 eval steps every 500: 10 h × 50/500 × 1/3 = 1/3 h on 4 × p5 at $98.32 = $131.09.

    With every other hidden rate at zero the bill is the quote plus exactly that line, and the
    wall-clock is 10 h + 1/3 h.
    """
    d = zero_hidden_plan()
    d["evaluation"] = {"interval_steps": 500, "steps": 50}
    fc = forecast(plan_from_dict(d), catalog, today=TODAY)
    (line,) = _eval_lines(fc)
    assert line.quantity == pytest.approx(1 / 3)
    assert line.cost_usd == pytest.approx(4 * 98.32 / 3)
    assert fc.total_usd == pytest.approx(4 * 98.32 * 10 + 4 * 98.32 / 3)
    assert fc.usage.wall_hours == pytest.approx(10 + 1 / 3)
    assert fc.as_dict()["time"]["eval_hours"] == pytest.approx(1 / 3)
    assert fc.as_dict()["time"]["gpu_hours"] == pytest.approx((10 + 1 / 3) * 32)


def test_failures_strike_during_evaluation(catalog: Catalog) -> None:
    """Failures scale with the hours the cluster runs, evaluation included.

    0.01 failures per GPU-day × 32 GPUs × (10 + 1/3) h / 24 = 0.13778 expected failures.
    """
    d = zero_hidden_plan()
    d["evaluation"] = {"interval_steps": 500, "steps": 50}
    d["reliability"]["gpu_failure_rate_per_gpu_day"] = 0.01
    fc = forecast(plan_from_dict(d), catalog, today=TODAY)
    assert fc.usage.reliability.failure_events == pytest.approx(0.01 * 32 * (10 + 1 / 3) / 24)


def test_interval_zero_turns_evaluation_off(catalog: Catalog) -> None:
    d = zero_hidden_plan()
    d["evaluation"] = {"interval_steps": 0, "steps": 100}
    fc = forecast(plan_from_dict(d), catalog, today=TODAY)
    assert _eval_lines(fc) == []
    assert fc.usage.evaluation.hours == 0.0
    assert fc.usage.wall_hours == pytest.approx(10.0)


def test_model_plan_eval_step_is_a_third_of_the_kernel_time(catalog: Catalog) -> None:
    """70B on 1.4T tokens on 512 H100 (no recompute): an eval step is a third of a step's kernel
    time and none of its fixed host/optimizer overhead.

    Per step (2^22 = 4,194,304 tokens, 1.4e12 / 4,194,304 = 333,786 steps): kernel = FLOPs/step
    × (1 + m) / (512 × 989e12 × e_max), host = step_overhead_s; eval/train step time =
    kernel / 3 / (kernel + host).
    """
    plan = plan_from_dict(
        {"model": {"params": 70e9, "tokens": 1.4e12}, "cluster": {"gpu": "h100", "gpus": 512}}
    )
    fc = forecast(plan, catalog, today=TODAY)
    assert fc.usage.time.layout is not None
    assert not fc.usage.time.layout.memory.recompute
    # shape 71 × 9072 (see test_forecast); fused causal attention timed at half its count
    flops = 6 * 70e9 * 1.4e12 + 0.5 * 12 * 71 * 9072 * 4096 * 1.4e12
    e_max, k_mem = catalog.value("time.fit.e_max"), catalog.value("time.fit.k_mem")
    m = k_mem * (989e12 / 3.35e12) / 9072
    steps = 1.4e12 / 4_194_304
    kernel = flops / steps * (1 + m) / (512 * 989e12 * e_max * h100_maturity(catalog))
    host = catalog.value("time.fit.step_overhead_s")
    fraction = kernel / 3 / (kernel + host)
    assert fc.usage.evaluation.step_fraction == pytest.approx(fraction)
    assert fc.usage.evaluation.hours == pytest.approx(
        fc.usage.compute.hours * 100 / 1000 * fraction
    )


def test_recompute_is_not_charged_to_evaluation(catalog: Catalog) -> None:
    """A plan that needs activation recompute: the eval step is a third of the kernel time
    *before* the 4/3 recompute factor (a forward pass has nothing to recompute)."""
    plan = plan_from_dict(
        {"model": {"params": 70e9, "tokens": 1e11}, "cluster": {"gpu": "h100", "gpus": 16}}
    )
    fc = forecast(plan, catalog, today=TODAY)
    lay = fc.usage.time.layout
    assert lay is not None
    assert lay.memory.recompute
    assert fc.usage.evaluation.step_fraction == pytest.approx(
        lay.compute_s * 3 / 4 / 3 / lay.busy_s
    )


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        (
            {"interval_steps": -1},
            "evaluation.interval_steps: input should be greater than or equal to 0",
        ),
        ({"steps": 0}, "evaluation.steps: input should be greater than or equal to 1"),
        ({"every": 10}, "evaluation.every: unknown key"),
    ],
)
def test_bad_evaluation_section(section: dict[str, Any], expected: str) -> None:
    d = zero_hidden_plan()
    d["evaluation"] = section
    with pytest.raises(SpecError, match=expected):
        plan_from_dict(d)


def test_bad_evaluation_in_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        "[cluster]\ninstance='p5.48xlarge'\nnodes=2\n[run]\nhours=1\n[evaluation]\nsteps=0\n"
    )
    code, _out, err = run_argv(["forecast", str(plan)], capsys)
    assert code == 1
    assert "evaluation.steps" in err
    assert str(plan) in err
    assert "Traceback" not in err
