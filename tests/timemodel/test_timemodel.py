"""Time model, memory feasibility, fit reproducibility and the every-accelerator contract."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from trainbill.catalog import Catalog, load_catalog
from trainbill.cli import main
from trainbill.memory import MemoryFitError, memory_per_gpu
from trainbill.timemodel import (
    FitParams,
    _dp_bandwidth,
    estimate_shape,
    estimate_time,
    training_flops,
)

ROOT = Path(__file__).resolve().parents[2]
IDS = [
    "v100",
    "a10g",
    "l4",
    "l40s",
    "a100-40gb",
    "a100-80gb",
    "h100",
    "h800",
    "h200",
    "b200",
    "mi300x",
    "mi250x",
    "mi250",
    "t4",
    "trainium1",
    "trainium2",
    "tpu-v4",
    "tpu-v5e",
    "tpu-v5p",
    "tpu-v6e",
]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog."""
    return load_catalog()


def _est(
    catalog: Catalog,
    *,
    nodes: int,
    precision: str = "bf16",
    params: float = 7e9,
    gpu: str = "p5.48xlarge",
    **overrides: Any,
):  # type: ignore[no-untyped-def]
    """A 7B model at a 4M-token batch of 4,096-token sequences, unless ``overrides`` (any other
    ``estimate_time`` keyword) say otherwise."""
    inst = catalog.instance(gpu)
    query: dict[str, Any] = {
        "tokens": 1e11,
        "global_batch_tokens": 4e6,
        "seq_len": 4096,
        "straggler_cv": 0.0,
        **overrides,
    }
    return estimate_time(
        catalog=catalog,
        accelerator=catalog.accelerator(inst.accelerator),
        instance=inst,
        nodes=nodes,
        precision=precision,
        hours=None,
        params=params,
        active_params=None,
        **query,
    )


def test_training_flops_hand_computed() -> None:
    """7B, 1T tokens, 32 layers × 4096 at seq 4096:
    6·7e9·1e12 + 12·32·4096·4096·1e12 = 4.2e22 + 6.44e21."""
    got = training_flops(active_params=7e9, tokens=1e12, layers=32, d_model=4096, seq_len=4096)
    assert got == pytest.approx(4.2e22 + 12 * 32 * 4096 * 4096 * 1e12)
    assert training_flops(active_params=21e9, tokens=1e12) == pytest.approx(
        1.26e23
    )  # MoE: 6·21e9·1e12


def test_shape_rule() -> None:
    """N = 12·L·d² with d = 128·L: 175B -> d = (175e9·128/12)^(1/3) = 12311, L = 96
    (GPT-3 is 96 × 12288)."""
    layers, d = estimate_shape(175e9, 128)
    assert layers == 96
    assert d == pytest.approx(12311, abs=2)


def test_more_gpus_never_less_stall(catalog: Catalog) -> None:
    """Stall fraction (comm + stragglers) does not fall as nodes grow from 1 to 64."""
    fractions = [_est(catalog, nodes=n).comm_stall_fraction for n in (1, 2, 8, 64)]
    assert fractions == sorted(fractions)


def test_fp8_speedup_below_two(catalog: Catalog) -> None:
    """FP8 doubles the H100 peak (1979 vs 989) but the compute time shrinks by less than 2×."""
    bf16 = _est(catalog, nodes=1).compute_hours
    fp8 = _est(catalog, nodes=1, precision="fp8").compute_hours
    assert 1.0 < bf16 / fp8 < 2.0


def test_fp8_never_slower_than_bf16(catalog: Catalog) -> None:
    """Trainium1 lists FP8 = BF16 = 190 TFLOP/s (trn1.32xlarge: 3.04 PFLOP/s / 16 chips): FP8
    matmuls at η_fp8 < 1 would be slower than BF16, so BF16 speed is used and the factor says so."""
    bf16 = _est(catalog, nodes=1, gpu="trn1.32xlarge")
    fp8 = _est(catalog, nodes=1, precision="fp8", gpu="trn1.32xlarge")
    assert fp8.compute_hours == pytest.approx(bf16.compute_hours)
    assert any(k == "precision" and "no faster than BF16" in v for k, v in fp8.factors)


def test_memory_hand_computed() -> None:
    """7B on 8 GPUs, 32 × 4096, seq 2048: state 16·7e9/8 = 14 GB; acts 32·34·2048·4096 = 9.13 GB."""
    est = memory_per_gpu(
        params=7e9,
        layers=32,
        d_model=4096,
        seq_len=2048,
        hbm_gb=80,
        usable_fraction=0.9,
        state_bytes_per_param=16,
        dp=8,
    )
    assert est.state_gb == pytest.approx(14.0)
    assert est.activations_gb == pytest.approx(32 * 34 * 2048 * 4096 / 1e9)
    assert est.buffer_gb == pytest.approx(4 * 7e9 / 32 / 1e9)  # two layers' bf16 weights
    assert est.fits
    assert not est.recompute


def test_cannot_fit_raises(catalog: Catalog) -> None:
    """A 1T-parameter model on one 8×A10G node (192 GB HBM, 16 TB of state) is refused."""
    with pytest.raises(MemoryFitError, match="does not fit"):
        _est(catalog, nodes=1, params=1e12, gpu="g5.48xlarge")


@pytest.mark.parametrize("gpu", IDS)
def test_contract_every_accelerator(gpu: str, capsys: pytest.CaptureFixture[str]) -> None:
    """forecast --json works for every accelerator id and reports gpu_hours, wall_hours, mfu."""
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "forecast",
                "--params",
                "7e9",
                "--active-params",
                "7e9",
                "--tokens",
                "1e11",
                "--gpu",
                gpu,
                "--gpus",
                "16",
                "--precision",
                "fp8",
                "--json",
                "--as-of",
                "2026-12-01",
            ]
        )
    assert exc.value.code in (0, None)
    t = json.loads(capsys.readouterr().out)["time"]
    assert t["gpu_hours"] >= t["wall_hours"] > 0
    assert 0 < t["mfu"] < 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--gpu", "h1000"], "h100"),
        (["--gpu", "h100", "--params", "1e12", "--gpus", "1"], "does not fit"),
        (["--gpu", "h100", "--active-params", "9e9"], "active_params"),
        (["--gpu", "h100", "--tokens", "0"], "tokens"),
    ],
)
def test_bad_input(args: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown GPU (with suggestion), no fit, active > params, tokens <= 0: one-line error,
    exit 1."""
    base = {"--params": "7e9", "--tokens": "1e11", "--gpus": "8"}
    for k, v in zip(args[::2], args[1::2], strict=True):
        base[k] = v
    with pytest.raises(SystemExit) as exc:
        main(["forecast", *[x for kv in base.items() for x in kv], "--json"])
    assert exc.value.code == 1
    assert needle in capsys.readouterr().err


def _fit_tool():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "tools"))
    import fit_time_model

    return fit_time_model


def _shipped() -> tuple[str, dict]:  # type: ignore[type-arg]
    text = (ROOT / "src" / "trainbill" / "catalog" / "data" / "time_model_fit.toml").read_text(
        encoding="utf-8"
    )
    return text, tomllib.loads(text)


def test_fit_file_reproducible(catalog: Catalog) -> None:
    """Re-rendering the shipped fit from its own parameters reproduces time_model_fit.toml
    exactly."""
    from trainbill.timemodel import fit_params

    tool = _fit_tool()
    shipped, doc = _shipped()
    stale = sorted({c.id for c in tool.cases()} - set(doc["report"]["loso_residuals"]))
    assert not stale, f"time_model_fit.toml predates rows {stale}: run tools/fit_time_model.py"
    loso = {c.id: c.published * (1.0 + doc["report"]["loso_residuals"][c.id]) for c in tool.cases()}
    typed_res = doc["report"]["typed_loso_residuals"]
    typed = {c.id: c.published * (1.0 + typed_res[c.id]) for c in tool.cases() if c.id in typed_res}
    assert set(typed) == {c.id for c in tool.cases() if c.kind == "whole_run"}
    dated_res = doc["report"]["dated_loso_residuals"]
    dated = {c.id: c.published * (1.0 + dated_res[c.id]) for c in tool.cases() if c.id in dated_res}
    assert set(dated) == set(typed)
    fit_date = doc["report"]["fit_date"]
    assert tool.render(fit_params(catalog), fit_date, loso, typed, dated) == shipped
    assert doc["report"]["rows"] >= 30  # every usable published row, not a hand-picked few
    assert len(tool.NAMES) <= 7  # a few global parameters, never one per row


@pytest.mark.slow
def test_shipped_fit_and_cross_validation_recomputed(catalog: Catalog) -> None:
    """Refitting from scratch and rerunning leave-one-source-out reproduces the shipped file
    (minutes)."""
    from datetime import date

    from trainbill.timemodel import fit_params

    tool = _fit_tool()
    shipped, doc = _shipped()
    rows = list(tool.cases())
    fp = tool.fit(tool.fitted(rows))
    assert fp == fit_params(catalog)
    fit_date = doc["report"]["fit_date"]
    cv = tool.cross_validate(rows, fp, software_date=date.fromisoformat(fit_date))
    assert tool.render(fp, fit_date, *cv) == shipped


def test_memory_bound_share_in_bytes(catalog: Catalog) -> None:
    """H100, d 4096: m = k_mem · (989e12 FLOP/s ÷ 3.35e12 B/s) / 4096
    = 1 · 295.2 / 4096 = 0.0721. Fused causal attention runs half its counted FLOPs
    (``time.causal_attention_work_share`` 0.5): timed per token 6e9 + 0.5 · 12 · 16 · 4096 ·
    2048 = 6.805e9 of the 7.611e9 counted, so MFU (full count) is 0.5 · 7.611 / 6.805 / (1 + m)."""
    fit = FitParams(e_max=0.5, k_mem=1.0, eta_fp8=1.0, overlap=0.0, step_overhead_s=0.0, k_attn=0.0)
    inst = catalog.instance("p5.48xlarge")
    est = estimate_time(
        catalog=catalog,
        accelerator=catalog.accelerator("h100"),
        instance=inst,
        nodes=1,
        precision="bf16",
        hours=None,
        params=1e9,
        active_params=None,
        tokens=1e11,
        global_batch_tokens=4e6,
        seq_len=2048,
        layers=16,
        d_model=4096,
        straggler_cv=0.0,
        recompute=False,
        fit=fit,
    )
    m = 989e12 / 3.35e12 / 4096
    flops = 6 * 1e9 * 1e11 + 12 * 16 * 4096 * 2048 * 1e11
    timed = 6 * 1e9 * 1e11 + 0.5 * 12 * 16 * 4096 * 2048 * 1e11
    assert est.compute_hours == pytest.approx(timed * (1 + m) / (8 * 989e12 * 0.5) / 3600)
    assert est.base_mfu == pytest.approx(0.5 * flops / timed / (1 + m))  # 0.5217


def test_unfused_attention_moves_scores_through_hbm(catalog: Catalog) -> None:
    """Pre-FlashAttention software pays k_attn bytes per score: H100, L 16, d 4096 (32 heads of
    128), seq 2048, k_attn 40 bytes: per token 40 · 16 · 32 · 2048 = 41,943,040 bytes, times the
    balance 989e12 / 3.35e12 = 295.22 FLOP/byte, over 6e9 + 12 · 16 · 4096 · 2048 = 7.6106e9
    FLOPs per token: m_attn = 1.627 of the full count, which unfused kernels compute; a fused
    causal kernel runs 6e9 + 0.5 · 1.6106e9 = 6.8053e9 (k_mem 0 isolates it), so the unfused
    step takes 7.6106 · 2.627 / 6.8053 = 2.938× the fused one.
    """
    fit = FitParams(
        e_max=0.5, k_mem=0.0, eta_fp8=1.0, overlap=0.0, step_overhead_s=0.0, k_attn=40.0
    )
    inst = catalog.instance("p5.48xlarge")
    hours = {}
    for fused in (True, False):
        est = estimate_time(
            catalog=catalog,
            accelerator=catalog.accelerator("h100"),
            instance=inst,
            nodes=1,
            precision="bf16",
            hours=None,
            params=1e9,
            active_params=None,
            tokens=1e11,
            global_batch_tokens=4e6,
            seq_len=2048,
            layers=16,
            d_model=4096,
            straggler_cv=0.0,
            recompute=False,
            fit=fit,
            fused_attention=fused,
        )
        hours[fused] = est.compute_hours
        assert any(name == "attention" for name, _ in est.factors) is not fused  # --explain says so
        assert any(name == "causal" for name, _ in est.factors) is fused  # and what is timed
    per_token_flops = 6e9 + 12 * 16 * 4096 * 2048
    m_attn = 40 * 16 * 32 * 2048 * (989e12 / 3.35e12) / per_token_flops
    assert m_attn == pytest.approx(1.627, abs=1e-3)
    fused_flops = 6e9 + 0.5 * 12 * 16 * 4096 * 2048
    assert hours[True] == pytest.approx(fused_flops * 1e11 / (8 * 989e12 * 0.5) / 3600)
    assert hours[False] == pytest.approx(
        per_token_flops * (1 + m_attn) * 1e11 / (8 * 989e12 * 0.5) / 3600
    )
    assert hours[False] / hours[True] == pytest.approx(2.938, abs=1e-3)


def test_shipped_k_attn_is_the_byte_count(catalog: Catalog) -> None:
    """k_attn is the bytes per score counted by hand for Megatron-LM's fp16 attention path with
    recompute (trainbill.timemodel's docstring), not a fitted value:
    forward 2 + 2 + 2 + 2 + 2 + 1 + 2 = 13, recompute 13, backward 2 + 5 + 6 + 4 + 2 = 19,
    total 45."""
    from trainbill.timemodel import fit_params

    counted = (2 + 2 + 2 + 2 + 2 + 1 + 2) * 2 + (2 + 5 + 6 + 4 + 2)
    assert counted == 45
    assert fit_params(catalog).k_attn == counted


def test_step_overhead_adds_fixed_seconds_per_step(catalog: Catalog) -> None:
    """1 s per step × (1e11 tokens / 4e6 per step = 25,000 steps) = 25,000 s = 6.944 h more."""
    inst = catalog.instance("p5.48xlarge")
    hours = []
    for overhead in (0.0, 1.0):
        fit = FitParams(
            e_max=0.5, k_mem=1.0, eta_fp8=1.0, overlap=0.0, step_overhead_s=overhead, k_attn=0.0
        )
        hours.append(
            estimate_time(
                catalog=catalog,
                accelerator=catalog.accelerator("h100"),
                instance=inst,
                nodes=1,
                precision="bf16",
                hours=None,
                params=1e9,
                active_params=None,
                tokens=1e11,
                global_batch_tokens=4e6,
                seq_len=2048,
                layers=16,
                d_model=4096,
                straggler_cv=0.0,
                recompute=False,
                fit=fit,
            ).compute_hours
        )
    assert hours[1] - hours[0] == pytest.approx(25_000 / 3600)


def test_dp_bandwidth_hierarchical() -> None:
    """p5: 3200 Gbps = 400 GB/s per node. tp 1 -> all 8 NICs: 400 GB/s; tp 8 -> one NIC: 50 GB/s;
    1 node: NVLink."""
    kw = {"gpn": 8, "intra_bw": 900e9, "node_bw": 400e9}
    assert _dp_bandwidth(gpus=64, tp=1, **kw) == pytest.approx(400e9)  # type: ignore[arg-type]
    assert _dp_bandwidth(gpus=64, tp=8, **kw) == pytest.approx(50e9)  # type: ignore[arg-type]
    assert _dp_bandwidth(gpus=64, tp=2, **kw) == pytest.approx(200e9)  # type: ignore[arg-type]
    assert _dp_bandwidth(gpus=8, tp=1, **kw) == pytest.approx(900e9)  # type: ignore[arg-type]
    assert _dp_bandwidth(gpus=64, tp=1, gpn=8, intra_bw=300e9, node_bw=400e9) == pytest.approx(
        300e9
    )  # NVLink cap


# --- issue 18: defaults at the plan's scale, layouts as frameworks pick them, MoE expert parallel


@pytest.mark.parametrize(
    ("gpus", "params", "active", "expected"),
    [
        # 2,048 tokens × 64 GPUs = 131,072 < the floor 2^22 = 4,194,304 (LLaMA-1, Llama 2: "4M"
        # tokens, 1,024 sequences of 4,096).
        (64, 7e9, None, 4_194_304),
        # 2,048 × 4,096 GPUs = 8,388,608 = 2,048 sequences of 4,096 exactly.
        (4096, 400e9, None, 8_388_608),
        # 2,048 × 16,384 = 33,554,432 > the dense ceiling 16,777,216 (Llama 3: 2,048 × 8,192).
        (16384, 400e9, None, 16_777_216),
        # MoE: 2,048 × 1,024 × 236 / 21 = 2,097,152 × 11.238 = 23,567,803.6 tokens = 5,753.86
        # sequences of 4,096, rounded to 5,754 whole ones (DeepSeek-V2 ran 37.7M).
        (1024, 236e9, 21e9, 5_754 * 4096),
        # MoE: 2,048 × 4,096 × 600 / 40 = 125,829,120 > the MoE ceiling 62,914,560 (DeepSeek-V3).
        (4096, 600e9, 40e9, 62_914_560),
    ],
)
def test_default_batch_grows_with_cluster(
    catalog: Catalog, gpus: int, params: float, active: float | None, expected: int
) -> None:
    """The default batch is 2,048 tokens per GPU (× total/active for MoE), within 4M and 16M
    (63M MoE)."""
    from trainbill.timemodel import default_global_batch

    batch, why = default_global_batch(
        catalog, gpus=gpus, params=params, active_params=active, seq_len=4096
    )
    assert batch == pytest.approx(expected)
    assert "2,048 tokens per GPU" in why


def _forecast_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    with pytest.raises(SystemExit) as exc:
        main(["forecast", *args, "--json", "--as-of", "2026-12-01"])
    assert exc.value.code in (0, None)
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_default_batch_in_assumed_and_stated_batch_wins(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """16,384 H100 get the 16,777,216-token default (listed in `assumed`); a plan's own batch is
    used as stated."""
    out = _forecast_json(
        ["--params", "400e9", "--tokens", "15e12", "--gpu", "h100", "--gpus", "16384"], capsys
    )
    assert any("global batch 16,777,216 tokens" in a for a in out["assumed"])
    assert any(f["factor"] == "batch" for f in out["time"]["factors"])
    plan = tmp_path / "plan.toml"
    plan.write_text(
        "[model]\nparams = 7e9\ntokens = 1e11\nglobal_batch_tokens = 2097152\n[cluster]\ngpu = "
        '"h100"\ngpus = 64\n',
        encoding="utf-8",
    )
    with pytest.raises(SystemExit):
        main(["forecast", str(plan), "--json", "--as-of", "2026-12-01"])
    stated = json.loads(capsys.readouterr().out)
    assert not any("global batch" in a for a in stated["assumed"])
    # 1e11 tokens / 2,097,152 per step = 47,684 steps, as the compute factor says.
    assert any(
        "47,684 steps of 2,097,152 tokens" in f["explanation"] for f in stated["time"]["factors"]
    )


def test_7b_on_64_h100_is_pure_data_parallel(catalog: Catalog) -> None:
    """7B (32 × 4096) on 64 H100 fits at TP 1: 16·7e9/64 = 1.75 GB state + 4·7e9/32 = 0.875 GB
    buffer + 32·34·4096·4096 = 18.25 GB activations = 20.9 GB of 72 GB, and its sync (2·2·7e9·63/64
    bytes over 400 GB/s × 0.7 = 0.098 s) hides behind seconds of compute: no stall, so
    TP 1 × PP 1 × DP 64."""
    inst = catalog.instance("p5.48xlarge")
    est = estimate_time(
        catalog=catalog,
        accelerator=catalog.accelerator("h100"),
        instance=inst,
        nodes=8,
        precision="bf16",
        hours=None,
        params=7e9,
        active_params=None,
        tokens=1e11,
        global_batch_tokens=4e6,
        seq_len=4096,
        layers=32,
        d_model=4096,
        straggler_cv=0.0,
    )
    lay = est.layout
    assert lay is not None
    assert (lay.tp, lay.pp, lay.ep, lay.dp) == (1, 1, 1, 64)
    assert lay.memory.total_gb == pytest.approx(1.75 + 0.875 + 32 * 34 * 4096 * 4096 / 1e9)
    assert lay.dp_sync_s == pytest.approx(2 * 2 * 7e9 * 63 / 64 / (3200 / 8 * 1e9 * 0.7))
    assert lay.stall_s == 0.0


def test_pipeline_gets_enough_micro_batches(catalog: Catalog) -> None:
    """400B on 16,384 H100 with 16,777,216 tokens = 4,096 sequences: the chosen pipeline has at
    least pp micro-batches (one sequence each) per data-parallel rank (Megatron's interleaved
    schedule)."""
    inst = catalog.instance("p5.48xlarge")
    est = estimate_time(
        catalog=catalog,
        accelerator=catalog.accelerator("h100"),
        instance=inst,
        nodes=2048,
        precision="bf16",
        hours=None,
        params=400e9,
        active_params=None,
        tokens=1e12,
        global_batch_tokens=16_777_216,
        seq_len=4096,
        straggler_cv=0.0,
    )
    lay = est.layout
    assert lay is not None
    assert lay.tp <= 8  # tensor parallel never leaves the node
    assert 4096 / lay.dp >= lay.pp


def test_stated_batch_too_small_to_split_names_smallest(catalog: Catalog) -> None:
    """4,194,304 tokens = 1,024 sequences cannot feed 16,384 GPUs: even TP 8 leaves 2,048
    data-parallel ranks (× pp micro-batches per pipeline), so the smallest batch is
    2,048 × 4,096 = 8,388,608 tokens."""
    from trainbill.errors import SpecError

    inst = catalog.instance("p5.48xlarge")
    with pytest.raises(
        SpecError, match=r"model.global_batch_tokens.*smallest batch that works is 8,388,608 tokens"
    ):
        estimate_time(
            catalog=catalog,
            accelerator=catalog.accelerator("h100"),
            instance=inst,
            nodes=2048,
            precision="bf16",
            hours=None,
            params=400e9,
            active_params=None,
            tokens=1e12,
            global_batch_tokens=4_194_304,
            seq_len=4096,
            straggler_cv=0.0,
        )


def _moe(catalog: Catalog, *, precision: str = "bf16", fit: FitParams | None = None):  # type: ignore[no-untyped-def]
    inst = catalog.instance("p5.48xlarge")
    return estimate_time(
        catalog=catalog,
        accelerator=catalog.accelerator("h100"),
        instance=inst,
        nodes=1,
        precision=precision,
        hours=None,
        params=16e9,
        active_params=2e9,
        tokens=1e11,
        global_batch_tokens=4_194_304,
        seq_len=4096,
        layers=16,
        d_model=2048,
        straggler_cv=0.0,
        fit=fit
        or FitParams(
            e_max=0.5, k_mem=0.0, eta_fp8=1.0, overlap=1.0, step_overhead_s=0.0, k_attn=0.0
        ),
    )


def test_moe_takes_expert_parallel_when_experts_do_not_fit(catalog: Catalog) -> None:
    """16B total / 2B active on 8 H100: the 14e9 expert weights are kept whole per expert-parallel
    rank (bf16 weights + grads, 4 bytes: ZeRO-1 as Megatron-Core and DeepSeek), so EP 1 needs
    (16·16e9 − 4·14e9)/8 + 4·14e9 = 25 + 56 = 81 GB > 72 GB; EP 2 fits at 25 + 28 GB. With the
    all-to-all and the gradient sync hidden behind compute (overlap 1) EP 2 has no stall, so it
    beats PP 2 (bubble) and TP 2 (all-reduce), and ties with EP 4 and 8 (the smaller wins).
    Its all-to-all: 8 bytes × 2048 × top-8 × 16 layers × 524,288 tokens per GPU = 1.0995e12 bytes,
    half of it to the other GPU over NVLink at 900 GB/s × 0.7: 0.8727 s, exposed 0."""
    est = _moe(catalog)
    lay = est.layout
    assert lay is not None
    assert (lay.tp, lay.pp, lay.ep) == (1, 1, 2)
    assert lay.memory.state_gb == pytest.approx(
        (16 * 16e9 - 4 * 14e9) / 8 / 1e9 + 4 * 14e9 / 2 / 1e9
    )
    out = 8 * 2048 * 8 * 16 * (4_194_304 / 8)
    assert lay.a2a_s == pytest.approx(out * 0.5 / (900e9 * 0.7))
    assert lay.a2a_exposed_s == 0.0
    assert any(k == "moe_all_to_all" and "1/2 of the copies" in v for k, v in est.factors)


def test_moe_fp8_all_to_all_is_six_bytes(catalog: Catalog) -> None:
    """FP8 (DeepSeek-V3: dispatch in FP8, combine in BF16) moves 6 bytes where BF16 moves 8: 6/8 of
    the time."""
    bf16, fp8 = _moe(catalog).layout, _moe(catalog, precision="fp8").layout
    assert bf16 is not None
    assert fp8 is not None
    assert fp8.ep == bf16.ep
    assert fp8.a2a_s == pytest.approx(bf16.a2a_s * 6 / 8)


def test_moe_efficiency_divides_kernel_speed(catalog: Catalog) -> None:
    """moe_efficiency 0.5 doubles an MoE model's kernel time (no host overhead, no stall) and leaves
    dense alone."""
    base = FitParams(
        e_max=0.5, k_mem=0.0, eta_fp8=1.0, overlap=1.0, step_overhead_s=0.0, k_attn=0.0
    )
    half = FitParams(
        e_max=0.5,
        k_mem=0.0,
        eta_fp8=1.0,
        overlap=1.0,
        step_overhead_s=0.0,
        k_attn=0.0,
        moe_efficiency=0.5,
    )
    assert _moe(catalog, fit=half).compute_hours == pytest.approx(
        2 * _moe(catalog, fit=base).compute_hours
    )
    with pytest.raises(ValueError, match="moe_efficiency"):
        FitParams(
            e_max=0.5,
            k_mem=0.0,
            eta_fp8=1.0,
            overlap=0.0,
            step_overhead_s=0.0,
            k_attn=0.0,
            moe_efficiency=0.0,
        )


def test_error_band_is_the_split_conformal_80_percent_band() -> None:
    """Ten rows with published/predicted 0.5, 0.6, ... 1.4 (n = 10): the band's ends are the
    floor(0.1 × 11) = 1st and ceil(0.9 × 11) = ceil(9.9) = 10th smallest: 0.5 and 1.4. (The
    interpolated P10/P90, 0.59 and 1.31, would cover a new row with probability 8/11 = 73%.)"""
    tool = _fit_tool()

    class Row:
        def __init__(self, i: int) -> None:
            self.id, self.published, self.source_key, self.kind = (
                f"r{i}",
                0.5 + 0.1 * i,
                f"s{i % 5}",
                "whole_run",
            )

    rows = [Row(i) for i in range(10)]
    pred = {r.id: 1.0 for r in rows}  # published / 1.0 = the ratios above
    lo, hi = tool.error_band(rows, pred)
    assert lo == pytest.approx(0.5)
    assert hi == pytest.approx(1.4)


def test_error_band_ranks_grow_with_the_rows() -> None:
    """n = 46 ratios 1, 2, ... 46: floor(0.1 × 47) = 4th smallest = 4, ceil(0.9 × 47) =
    ceil(42.3) = 43rd = 43; between them lie (43 - 4) / 47 = 83% of new draws' ranks."""
    tool = _fit_tool()

    class Row:
        def __init__(self, i: int) -> None:
            self.id, self.published, self.source_key, self.kind = f"r{i}", float(i), "s", "x"

    rows = [Row(i) for i in range(1, 47)]
    assert tool.error_band(rows, {r.id: 1.0 for r in rows}) == (4.0, 43.0)


def test_band_coverage_leaves_each_source_out() -> None:
    """Coverage counts a source's rows against a band computed from the OTHER sources only."""
    tool = _fit_tool()

    class Row:
        def __init__(self, rid: str, ratio: float, key: str) -> None:
            self.id, self.published, self.source_key, self.kind = rid, ratio, key, "whole_run"

    # Sources a-e at ratio 1.0, source f far out at 3.0: f's band (from a-e, n = 5: ranks
    # floor(0.6) = 0 -> 1 and ceil(5.4) = 6 -> 5, the whole range) is 1.0-1.0, f is outside;
    # each of a-e sees the others (four 1.0, one 3.0): band 1.0-3.0 -> inside.
    rows = [Row(k, 1.0, k) for k in "abcde"] + [Row("f", 3.0, "f")]
    pred = {r.id: 1.0 for r in rows}
    assert tool.band_coverage(rows, pred) == pytest.approx(5 / 6)


def test_bucket_band_coverage_uses_the_rows_own_bucket() -> None:
    """With ``by_bucket`` a row's band comes from the other sources of its cluster-size bucket:
    six 16-GPU runs at ratio 2.0 (sources a-f) and six 4,096-GPU runs at 1.0 (g-l). One band
    from all others (n = 11: ranks floor(1.2) = 1 and ceil(10.8) = 11, the whole range 1.0-2.0)
    holds every run; bucket bands (n = 5 others, whole range) are 2.0-2.0 and 1.0-1.0, which
    also hold every run; a 4,096-GPU run at 2.0 (source m) is inside the one band (1.0-2.0) but
    outside its bucket's (1.0-1.0): coverage 13/13 vs 12/13."""
    tool = _fit_tool()

    class Row:
        def __init__(self, key: str, ratio: float, gpus: int) -> None:
            self.id, self.published, self.source_key, self.kind = key, ratio, key, "whole_run"
            self.gpus = gpus

    rows = [Row(k, 2.0, 16) for k in "abcdef"] + [Row(k, 1.0, 4096) for k in "ghijkl"]
    rows.append(Row("m", 2.0, 4096))
    pred = {r.id: 1.0 for r in rows}
    assert tool.band_coverage(rows, pred) == pytest.approx(13 / 13)
    assert tool.band_coverage(rows, pred, by_bucket=True) == pytest.approx(12 / 13)


def test_error_band_quantiles_by_cluster_size(catalog: Catalog) -> None:
    """The forecast's band is its cluster-size bucket's: up to 128 GPUs, 129 to 1,024, more."""
    from trainbill.timemodel import error_band_quantiles

    def band(name: str) -> tuple[float, float, float]:
        return tuple(
            float(catalog.value(f"time.error_band.{name}_{q}")) for q in ("p10", "p50", "p90")
        )  # type: ignore[return-value]

    assert catalog.value("time.error_band.small_cluster_max_gpus") == 128
    assert catalog.value("time.error_band.mid_cluster_max_gpus") == 1024
    for gpus, name, words in (
        (8, "small_cluster", "up to 128 GPUs"),
        (128, "small_cluster", "up to 128 GPUs"),
        (129, "mid_cluster", "129 to 1,024 GPUs"),
        (1024, "mid_cluster", "129 to 1,024 GPUs"),
        (1025, "large_cluster", "more than 1,024 GPUs"),
    ):
        q = error_band_quantiles(catalog, gpus)
        assert (q.p10, q.p50, q.p90) == band(name)
        assert words in q.bucket
        assert q.p10 < q.p50 < q.p90


def _small_step(catalog: Catalog, *, nodes: int, measured_mfu: float | None = None):  # type: ignore[no-untyped-def]
    """A 1.04B decoder (d 2048, 18 layers) at 16 sequences of 2,048 tokens per GPU on H200
    nodes: the shape trainbill measured on one H200 (benchmarks/results/h200-2026-12-04)."""
    return _est(
        catalog,
        nodes=nodes,
        params=1.04e9,
        gpu="p5en.48xlarge",
        tokens=1e10,
        global_batch_tokens=nodes * 8 * 16 * 2048,
        seq_len=2048,
        layers=18,
        d_model=2048,
        measured_mfu=measured_mfu,
    )


def test_one_node_warns_when_the_fitted_step_overhead_is_much_of_the_step(
    catalog: Catalog,
) -> None:
    """One node, short steps: the fitted per-step overhead (time.fit.step_overhead_s) is more
    than time.single_node_overhead_warning_share of the step, so the forecast says so; two
    nodes (the runs it was fitted to) or a measured MFU (no modelled overhead) do not."""
    est = _small_step(catalog, nodes=1)
    lay = est.layout
    overhead = float(catalog.value("time.fit.step_overhead_s"))
    assert lay.host_s == pytest.approx(overhead)
    assert lay.host_s > float(catalog.value("time.single_node_overhead_warning_share")) * lay.step_s
    (warning,) = [w for w in est.warnings if w.startswith("one node:")]
    assert f"{overhead:.2f} s of each {lay.step_s:.2f} s step" in warning
    assert "--calibration" in warning
    assert not any(w.startswith("one node:") for w in _small_step(catalog, nodes=2).warnings)
    measured = _small_step(catalog, nodes=1, measured_mfu=0.55)
    assert not any(w.startswith("one node:") for w in measured.warnings)


def test_one_node_with_long_steps_does_not_warn(catalog: Catalog) -> None:
    """7B at a 4M-token batch on one p5 node: steps of tens of seconds, the 0.35 s overhead
    a few percent of each: below the warning share, no warning."""
    est = _est(catalog, nodes=1)
    share = float(catalog.value("time.single_node_overhead_warning_share"))
    assert est.layout.host_s < share * est.layout.step_s
    assert not any(w.startswith("one node:") for w in est.warnings)
