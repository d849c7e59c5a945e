"""Numbers no real run has: refused with the field named, never "$inf", a 300-digit bill or a crash.

Found in a careless-input pass: ``hours = "inf"`` priced "$inf"; ``params = 1e308`` raised
OverflowError; ``gpus = 1e29`` printed a 100-digit wall-clock; a 1e308 GB volume made the bill
"$inf"; ``simulate`` on a 1e12-hour run tried to allocate 20 TiB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import TODAY, run_argv, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecast import forecast
from trainbill.simulate import _uniform_sums
from trainbill.spec import plan_from_dict


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("run", "hours", "inf", "finite number"),
        ("run", "hours", float("nan"), "finite number"),
        ("run", "hours", 1e308, "must be at most 1,000,000: too large for any real run"),
        ("run", "deadline_hours", float("inf"), "finite number"),
        ("storage", "ebs_gb_per_node", "-inf", "finite number"),
        ("cluster", "nodes", 10**9, "must be at most 100,000"),
        ("cluster", "gpus", 10**29, "must be at most 1,000,000"),
    ],
)
def test_outsized_plan_numbers_name_the_field(
    section: str, key: str, value: Any, expected: str
) -> None:
    plan = zero_hidden_plan()
    if key == "gpus":
        plan["cluster"] = {"gpu": "h100", "gpus": value}
    else:
        plan[section][key] = value
    with pytest.raises(SpecError) as err:
        plan_from_dict(plan)
    assert f"{section}.{key}" in str(err.value)
    assert expected in str(err.value)


def test_model_size_cap_reads_as_a_number() -> None:
    with pytest.raises(SpecError, match=r"model\.params: must be at most 1e\+15: too large"):
        plan_from_dict(
            {
                "model": {"params": 1e308, "tokens": 1e12},
                "cluster": {"instance": "p5.48xlarge", "nodes": 4},
            }
        )


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


def test_uniform_sums_stay_bounded_and_unbiased() -> None:
    """Sum of k U(0,1): mean k/2, sd sqrt(k/12). k = 3 is drawn exactly (mean 1.5, sd 0.5);
    k = 50,000 by the normal approximation (mean 25,000, sd 64.55) without 2e8 draws."""
    g = np.random.default_rng(7)
    exact = _uniform_sums(g, np.full(40_000, 3, dtype=np.int64))
    assert exact.min() >= 0.0
    assert exact.max() <= 3.0
    assert abs(exact.mean() - 1.5) < 0.02  # 4 × 0.5 / sqrt(40,000) = 0.01
    big = _uniform_sums(g, np.full(4000, 50_000, dtype=np.int64))
    assert abs(big.mean() - 25_000) < 5  # 4 × 64.55 / sqrt(4000) = 4.1
    assert 60 < big.std() < 69
    mixed = _uniform_sums(g, np.array([0, 2, 5000], dtype=np.int64))
    assert mixed[0] == 0.0
    assert 0.0 <= mixed[1] <= 2.0
    assert 0.0 <= mixed[2] <= 5000.0


def test_cli_simulate_of_a_huge_cluster_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """100,000 GPUs for 1,000 h: ~2,000 failures per trial, which used to be 2,000 draws each."""
    f = tmp_path / "big.toml"
    f.write_text(
        '[run]\nhours = 1000\n[cluster]\ninstance = "p5.48xlarge"\nnodes = 12500\n',
        encoding="utf-8",
    )
    code, stdout, _err = run_argv(["simulate", str(f), "--trials", "500", "--json"], capsys)
    out = json.loads(stdout)
    assert code == 0
    assert out["trials"] == 500
    # 4.74e-4 × 100,000 GPUs × ≥ 1,000 exposed h / 24 ≥ 1,975 failures per run on average.
    assert out["mean_events"]["failures"] > 1975


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


def test_counts_below_one_are_refused() -> None:
    with pytest.raises(
        SpecError, match=r"model\.params: input should be greater than or equal to 1"
    ):
        plan_from_dict(
            {"model": {"params": 1e-300, "tokens": 1e11}, "cluster": {"gpu": "h100", "gpus": 8}}
        )


def test_plan_file_with_bom_reads_and_latin1_is_named(tmp_path: Path) -> None:
    """Windows editors write a UTF-8 byte-order mark (TOML forbids it: 'Invalid statement')."""
    from trainbill.spec import load_plan

    bom = tmp_path / "bom.toml"
    bom.write_bytes(
        b'\xef\xbb\xbf[run]\nhours = 10\n[cluster]\ninstance = "p5.48xlarge"\nnodes = 2\n'
    )
    assert load_plan(bom).cluster.nodes == 2
    latin = tmp_path / "latin.toml"
    latin.write_bytes(
        b'[run]\nname = "caf\xe9"\n'
    )  # é (Latin-1 0xE9) after len('[run]\n') 6 + len('name = "caf') 11 = byte 17
    with pytest.raises(SpecError, match=r"not UTF-8 text \(byte 17: b'\\xe9'\)"):
        load_plan(latin)


def test_atomic_writes_keep_modes(tmp_path: Path) -> None:
    """mkstemp makes 0600 temp files; renamed as is, a shared 0644 file turned private."""
    import os
    import stat

    from trainbill._io import atomic_write_text

    shared = tmp_path / "shared.toml"
    shared.write_text("old", encoding="utf-8")
    shared.chmod(0o640)
    atomic_write_text(shared, "new", replace=True)
    assert shared.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.toml"
        atomic_write_text(fresh, "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # 0666 & ~0022


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
