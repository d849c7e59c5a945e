"""Shared test helpers: the packaged catalog, the seed example, a plan with every hidden cost
switched off, and the one way tests run the CLI in-process (``run_cli`` / ``run_argv``).

Test files import the constants and helpers by name (``from conftest import SEED, run_cli``):
pytest puts ``tests/`` on ``sys.path`` (``pythonpath`` in pyproject).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from trainbill.catalog import Catalog, load_catalog
from trainbill.cli import main
from trainbill.spec import Plan

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
#: The seed article's run (Llama-3-70B fine-tune on 32 × p5.48xlarge): the example most tests use.
SEED = EXAMPLES / "seed-70b-finetune.toml"
TODAY = date(2026, 12, 2)
#: The head of a bills calibration file (what `trainbill calibrate` writes before its factors):
#: 100 GPU node-hours billed $5,504 in April 2026. Tests append the factors they price.
BILLS_CALIBRATION_HEAD = """
[calibration]
kind = "bills"
schema_version = 1
created_at = 2026-11-30T12:00:00Z
period_start = 2026-04-01
period_end = 2026-05-01
currency = "USD"
basis = "billed_cost"
gpu_node_hours = 100.0
gpu_compute_usd = 5504.0
source_files = ["april.csv"]
"""
#: A bill calibration, hand-picked: storage $2.00 and networking $0.50 per GPU node-hour,
#: replacing the modelled lines (CLI, API and page tests share it).
BILLS_OVERHEADS_TOML = (
    BILLS_CALIBRATION_HEAD
    + """
[calibration.factors_usd_per_node_hour]
storage = 2.0
networking = 0.5

[calibration.totals_usd]
storage = 200.0
networking = 50.0
"""
)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``trainbill ARGS`` run in-process; Typer exits via
    ``SystemExit``, which becomes the code."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def run_argv(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``run_cli`` taking the argument list as one value (tests that build it in a variable)."""
    return run_cli(capsys, *argv)


def refused(argv: Sequence[str], capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """Exit 1 with exactly one ``trainbill: error:`` line, no traceback, containing every needle."""
    code, _, err = run_argv(argv, capsys)
    assert code == 1, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("trainbill: error:"), err
    for needle in needles:
        assert needle in lines[0], (needle, err)
    return lines[0]


@pytest.fixture
def plan_copy(tmp_path: Path) -> Path:
    """A private copy of the seed example (tests must never write next to the real one)."""
    p = tmp_path / "plan.toml"
    p.write_bytes(SEED.read_bytes())
    return p


@pytest.fixture(autouse=True)
def _isolated_user_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or writes the developer's own trainbill state.

    Without this, a price cache left by ``trainbill prices update`` or a ``TRAINBILL_CATALOG``
    overlay in the shell would change the prices tests see, and bill SQL compiled by tests would
    land in ``~/.cache``. Each test gets a fresh empty cache; tests that need one set their own.
    """
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(tmp_path_factory.mktemp("user-cache")))
    monkeypatch.delenv("TRAINBILL_CATALOG", raising=False)


def h100_maturity(catalog: Catalog) -> float:
    """The time model's software-maturity factor for an H100 run priced on ``TODAY``.

    H100 launched 2022-09-20 (catalog); to 2026-12-02 is 4 · 365 + 1 (29 Feb 2024) = 1461 days
    to 2026-09-20, then 10 + 31 + 30 + 2 = 73: 1534 days = 4.1999 years. Maturity =
    1 − immaturity · exp(−age / τ) with the catalog's fitted immaturity and assumed τ.
    """
    age = 1534 / 365.25
    a = float(catalog.value("time.fit.immaturity"))
    tau = float(catalog.value("time.maturity_tau_years"))
    return 1.0 - a * math.exp(-age / tau)


def seed_step_seconds(catalog: Catalog) -> tuple[float, float]:
    """(compute, host) seconds of one 4,194,304-token step of the seed example, by hand.

    The plan states no batch: 2,048 tokens per GPU × 256 GPUs = 524,288 is held at the floor
    2^22 = 4,194,304 (``default_global_batch``; 1,024 sequences of 4,096).

    70e9 params, no layers/d_model: d = (70e9 × 128 / 12)^(1/3) = 9072.4 → 9072, L = 71.
    FLOPs per token 6 · 70e9 + 12 · 71 · 9072 · 4096 (attention; fused causal attention is
    timed at half its count, ``time.causal_attention_work_share`` 0.5), × 4,194,304 tokens /
    256 GPUs, at
    (1 + m) / (989e12 · e_max · maturity) s/FLOP with m = k_mem · (989 / 3.35) / 9072 (no
    recompute: at the chosen tp 2 the activations fit). Maturity at prices.as_of 2025-05-01,
    H100 launched 2022-09-20: 103 + 365 + 366 + 120 = 954 days. Host: the fitted fixed overhead
    per step.
    """
    age = 954 / 365.25
    tau = float(catalog.value("time.maturity_tau_years"))
    maturity = 1.0 - float(catalog.value("time.fit.immaturity")) * math.exp(-age / tau)
    m = float(catalog.value("time.fit.k_mem")) * (989 / 3.35) / 9072
    sec_per_flop = (1 + m) / (989e12 * float(catalog.value("time.fit.e_max")) * maturity)
    compute_s = (6 * 70e9 + 0.5 * 12 * 71 * 9072 * 4096) * 4_194_304 / 256 * sec_per_flop
    return compute_s, float(catalog.value("time.fit.step_overhead_s"))


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The packaged catalog (no overlays)."""
    return load_catalog()


#: Commitment rates and SageMaker ml.* prices for tests: ILLUSTRATIVE round numbers, not
#: published prices (the packaged catalog holds only published ones, and has none of these).
#: Chosen so hand arithmetic is easy; each test states the figures it uses.
ILLUSTRATIVE_RATES = """provider,region,item,option,unit,usd,effective_from,source
aws,us-east-1,p5.48xlarge,compute_sp_1yr,instance-hour,60.00,2024-01-01,ILLUSTRATIVE test rate
aws,us-east-1,p5.48xlarge,sp_1yr,instance-hour,50.00,2024-01-01,ILLUSTRATIVE test rate
aws,us-east-1,p5.48xlarge,compute_sp_3yr,instance-hour,45.00,2024-01-01,ILLUSTRATIVE test rate
aws,us-east-1,p4d.24xlarge,compute_sp_3yr,instance-hour,15.00,2024-01-01,ILLUSTRATIVE test rate
aws,us-east-1,trn1.32xlarge,compute_sp_1yr,instance-hour,15.00,2024-01-01,ILLUSTRATIVE test rate
aws,us-east-1,ml.p5.48xlarge,on_demand,instance-hour,120.00,2024-01-01,ILLUSTRATIVE test rate
aws,us-east-1,ml.p5.48xlarge,sagemaker_sp_1yr,instance-hour,80.00,2024-01-01,ILLUSTRATIVE test rate
gcp,us-central1,tpu-v6e,sp_1yr,chip-hour,1.89,2025-01-01,ILLUSTRATIVE test rate
azure,eastus,Standard_ND96asr_v4,sp_3yr,instance-hour,12.00,2025-01-01,ILLUSTRATIVE test rate
"""


@pytest.fixture(scope="session")
def commitment_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The packaged catalog plus ``ILLUSTRATIVE_RATES`` as an overlay (a user's own quotes)."""
    d = tmp_path_factory.mktemp("commitment-rates")
    (d / "prices.csv").write_text(ILLUSTRATIVE_RATES, encoding="utf-8")
    return load_catalog([d])


#: 13B (Llama-2-13B shape) at 32K tokens: attention is about half the FLOPs.
LONG_CONTEXT_PLAN: dict[str, Any] = {
    "run": {"name": 'long <ctx> & "q"'},
    "model": {"params": 13e9, "tokens": 1e10, "layers": 40, "d_model": 5120, "seq_len": 32768},
    "cluster": {"instance": "p5.48xlarge", "nodes": 16, "orchestrator": "eks"},
    "prices": {"as_of": date(2026, 1, 1)},
    "storage": {"fsx_capacity_gb": 24000, "fsx_tier": "persistent_125"},
    "checkpoint": {"target": "fsx", "interval_hours": 0.5},
}


def zero_hidden_plan(**cluster: Any) -> dict[str, Any]:
    """A plan whose every hidden-cost rate is zero: its bill must equal its quote."""
    return {
        "run": {"name": "zero", "hours": 10},
        "cluster": {"instance": "p5.48xlarge", "nodes": 4, **cluster},
        "prices": {"as_of": "2025-05-01"},
        "storage": {"ebs_gb_per_node": 0, "fsx_capacity_gb": 0},
        "data": {"dataset_gb": 0},
        "network": {"nat_gateways": 0, "public_ips_per_node": 0, "nat_gb_per_node_hour": 0},
        "monitoring": {"custom_metrics_per_node": 0, "logs_gb_per_node_hour": 0},
        "reliability": {
            "gpu_failure_rate_per_gpu_day": 0,
            "straggler_cv": 0,
            "spot_reclaim_rate_per_node_hour": 0,
        },
        "evaluation": {"interval_steps": 0},
    }


#: A hand-written profile calibration (H100, BF16, MFU 0.4 = 395.6 / 989) for forecast tests.
PROFILE_TOML = """
[calibration]
kind = "profile"
schema_version = 1
accelerator = "h100"
precision = "bf16"
achieved_tflops_per_gpu = 395.6
mfu = 0.4
peak_tflops = 989.0
step_seconds = 1.0
tokens_per_step = 8192
measured_at = 2026-11-30T12:00:00Z
source = "hand-written test calibration"
"""


def stated_hours(plans: Sequence[Plan]) -> list[float] | None:
    """The hours each node count's plan states (a candidate scales them with its GPUs), as
    ``usage_over_nodes`` takes them beside the one plan; None when the plans state none."""
    hours = [p.run.hours for p in plans]
    if hours[0] is None:
        return None
    return [float(h) for h in hours if h is not None]
