"""The forecast at the edges of what a run can be: the caps are inclusive, an overflowing line
or a century-long wall-clock is named with its cause, an overloaded recovery warns, and a
cluster the plan states two ways (nodes and GPUs, or another cloud's region) is refused.

Schema-level refusals (non-finite or outsized numbers) are in ``test_spec.py``; failure
sampling on huge clusters is in ``test_simulate_sampling.py``.
"""

from __future__ import annotations

import pytest

from conftest import TODAY, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import forecast
from trainbill.spec import plan_from_dict


def test_caps_are_inclusive(catalog: Catalog) -> None:
    """1,000,000 h on 4 × p5.48xlarge is still priced: 4 × $98.32 (2025-05-01) × 1e6 h =
    $393,280,000."""
    plan = zero_hidden_plan()
    plan["run"]["hours"] = 1e6
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert fc.quote_usd == pytest.approx(4 * 98.32 * 1e6)


def test_overflowing_line_is_named(catalog: Catalog) -> None:
    """The schema caps ebs_gb_per_node (a petabyte); a Plan built in code skips validation, so
    the forecast's own overflow check still names the line: 1e308 GB × 4 nodes × months = inf."""
    plan = plan_from_dict(zero_hidden_plan())
    plan = plan.model_copy(
        update={"storage": plan.storage.model_copy(update={"ebs_gb_per_node": 1e308})}
    )
    with pytest.raises(SpecError, match=r"line 'EBS gp3 volumes' \(storage\) overflows"):
        forecast(plan, catalog, today=TODAY)


def test_century_long_wall_clock_names_its_cause(catalog: Catalog) -> None:
    """Both at their caps: 24 failures/GPU-day × 32 GPUs = 32 an hour, each a year-long (8,766 h)
    restart: the 10 h run's wall-clock blows past 1e6 h, and failures are named as the cause."""
    plan = zero_hidden_plan()
    plan["reliability"] = {"gpu_failure_rate_per_gpu_day": 24, "restart_hours": 8766}
    with pytest.raises(SpecError) as err:
        forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert "over 1e+06 h" in str(err.value)
    assert "most of it is failures" in str(err.value)


def test_overloaded_recovery_warns(catalog: Catalog) -> None:
    """12,500 p5 nodes = 100,000 H100: 4.74e-4 failures/GPU-day × 100,000 / 24 = 1.975 per hour,
    one every 60 / 1.975 = 30.4 min; each loses 2 h / 2 + 1 h restart (raw EC2) = 2 h, so
    recovery would take 1.975 × 2 = 395% of the time."""
    plan = {"run": {"hours": 100}, "cluster": {"instance": "p5.48xlarge", "nodes": 12_500},
            "checkpoint": {"interval_hours": 2}}  # fmt: skip
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    (w,) = [w for w in fc.warnings if w.startswith("failures and spot reclaims")]
    assert "every 30 min" in w
    assert "(395% of the time)" in w
    # 4 nodes = 32 GPUs: one failure every 24 / (4.74e-4 × 32) = 1,582 h; no warning.
    small = forecast(
        plan_from_dict({**plan, "cluster": {"instance": "p5.48xlarge", "nodes": 4}}),
        catalog,
        today=TODAY,
    )
    assert not [w for w in small.warnings if w.startswith("failures and spot reclaims")]


def test_gpu_count_rounded_up_to_whole_nodes_is_said(catalog: Catalog) -> None:
    """3 H100 on p5.48xlarge (8 per node): ceil(3 / 8) = 1 node = 8 GPUs billed, with a warning."""
    plan = plan_from_dict({"run": {"hours": 10}, "cluster": {"gpu": "h100", "gpus": 3}})
    fc = forecast(plan, catalog, today=TODAY)
    assert fc.usage.gpus == 8
    assert "cluster.gpus = 3, but p5.48xlarge holds 8 per node: priced 1 node = 8 GPUs" in " ".join(
        fc.warnings
    )
    exact = forecast(
        plan_from_dict({"run": {"hours": 10}, "cluster": {"gpu": "h100", "gpus": 16}}),
        catalog,
        today=TODAY,
    )
    assert not [w for w in exact.warnings if w.startswith("cluster.gpus")]


def test_plan_with_disagreeing_nodes_and_gpus_is_an_error(catalog: Catalog) -> None:
    """3 × p5.48xlarge hold 3 × 8 = 24 GPUs, not the 8 the plan also states: priced 24 before."""
    plan = plan_from_dict(
        {"run": {"hours": 10}, "cluster": {"instance": "p5.48xlarge", "nodes": 3, "gpus": 8}}
    )
    with pytest.raises(
        SpecError, match=r"cluster\.gpus: 8 GPUs, but cluster\.nodes = 3 × p5\.48xlarge .* hold 24"
    ):
        forecast(plan, catalog, today=TODAY)
    agree = plan_from_dict(
        {"run": {"hours": 10}, "cluster": {"instance": "p5.48xlarge", "nodes": 3, "gpus": 24}}
    )
    assert forecast(agree, catalog, today=TODAY).usage.gpus == 24


def test_region_of_another_cloud_is_refused(catalog: Catalog) -> None:
    """us-central1 is a GCP region in the catalog: on an AWS plan it is a mistake, and pricing
    us-east-1 under its name (with a warning) hid that. An unknown region still falls back."""
    plan = zero_hidden_plan()
    plan["cluster"]["region"] = "us-central1"
    with pytest.raises(
        SpecError,
        match=(
            r"cluster\.region: 'us-central1' is a gcp region, not aws; aws regions in the "
            r"catalog: .*us-east-1"
        ),
    ):
        forecast(plan_from_dict(plan), catalog, today=TODAY)
    plan["cluster"]["region"] = "eu-north-7"  # in no cloud's catalog: reference region, warned
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert any("reference region" in w for w in fc.warnings)


def test_training_past_a_century_names_the_tokens(catalog: Catalog) -> None:
    """1e17 tokens of a 7B model on 8 H100: 6 × 7e9 × 1e17 = 4.2e27 FLOPs; at even 989 TFLOP/s × 8
    that is 4.2e27 / 7.9e15 / 3600 ≈ 1.5e8 h of training, far past the 1e6 h bound."""
    plan = plan_from_dict(
        {
            "model": {"params": 7e9, "tokens": 1e17},
            "cluster": {"instance": "p5.48xlarge", "nodes": 1},
        }
    )
    with pytest.raises(SpecError) as err:
        forecast(plan, catalog, today=TODAY)
    assert err.value.field == "model.tokens"
    assert "most of it is training" in str(err.value)
