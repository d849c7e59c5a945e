"""Published runs as time-model cases: what each row measured and how trainbill predicts it.

Shared by ``benchmarks/accuracy.py`` and ``tools/fit_time_model.py`` so the benchmark scores
exactly what the fit minimised. Caveats from ``tests/data/published_runs/README.md`` handled here:

* HFU vs MFU: Megatron-LM 2021 TFLOP/s count activation recompute (Eq. 3, one extra forward),
  so their model-FLOP rate is 3/4 of the published figure; MosaicML MFU includes attention
  FLOPs like our FLOP count; Llama 3 Table 4 MFU is BF16.
* FP8: MosaicML FP8 MFU is against the FP8 peak; Megatron-Bridge gives tokens/s, which we
  convert with our own FLOPs per token (no convention needed).
* llm-foundry A100 100× bug: already divided in the CSV; we use the MFU column anyway.
* torchtitan used non-standard 500 W H100s with HBM2e: skipped (no such accelerator).
* MLPerf GPT-3 is not from scratch: used as a throughput row (tokens/s), not a whole run.
* Run dates (``RUN_DATES``) feed the software-maturity factor: the run's date minus the
  accelerator's ``launched`` date in the catalog. Each is the middle of the training period a
  source states, else its publication month; they are dates of the runs, never tuned.
* Approximate wall hours (Falcon) are used as published; GPU counts that a source does not give
  (Llama 2 / LLaMA-1: 2048 A100 as for LLaMA-65B; DeepSeek: 2048 H800 as for DeepSeek-V3) are
  stated per case.

Model shapes (layers, d_model) are the published architectures, cited per case.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from trainbill.catalog import Catalog
from trainbill.spec import plan_from_dict
from trainbill.timemodel import FitParams, estimate_time
from trainbill.usage import software_age_years

CSV = (
    Path(__file__).resolve().parents[1] / "tests" / "data" / "published_runs" / "published_runs.csv"
)

# (layers, d_model) of published architectures.
SHAPES: dict[str, tuple[int, int]] = {
    "llama3-405b": (126, 16384),  # arXiv 2407.21783 Table 3
    "llama3-70b": (80, 8192),
    "llama3-8b": (32, 4096),
    "gpt3-175b": (96, 12288),  # arXiv 2005.14165 Table 2.1
    "mpt-1b": (24, 2048),  # mosaicml/llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml
    "mpt-3b": (32, 2560),
    "mpt-7b": (32, 4096),
    "mpt-13b": (40, 5120),
    "mpt-30b": (48, 7168),
    "mpt-70b": (80, 8192),
    "megatron-1.7b": (24, 2304),  # arXiv 2104.04473 Table 1
    "megatron-18.4b": (40, 6144),
    "megatron-145.6b": (80, 12288),
    "megatron-1008.0b": (128, 25600),
    "llama-7b": (32, 4096),  # arXiv 2302.13971 Table 2
    "llama-13b": (40, 5120),
    "opt-175b": (96, 12288),  # arXiv 2205.01068 Table 1
    "falcon-7b": (32, 4544),  # tiiuae/falcon-7b config
    "falcon-40b": (60, 8192),
    "palm-540b": (118, 18432),  # arXiv 2204.02311 Table 1
    "deepseek-v2": (60, 5120),  # arXiv 2405.04434 Sec. 3.1
    "deepseek-67b": (95, 8192),  # DeepSeek LLM arXiv 2401.02954 Table 2
}
# When each run happened (row-id prefix -> date), from its source.
RUN_DATES: dict[str, date] = {
    "llama2": date(2023, 4, 1),  # Llama 2 model card: "trained between January 2023 and July 2023"
    "llama1": date(2023, 1, 1),  # LLaMA model card: "trained between December 2022 and Feb. 2023"
    "llama3": date(2024, 4, 1),  # Llama 3 pretraining, early 2024 (paper 2024-07, models 2024-04-18)
    "deepseek-v2": date(2024, 3, 1),  # DeepSeek-V2 paper 2024-05 (arXiv 2405.04434); month approximate
    "deepseek-67b": date(2023, 10, 1),  # DeepSeek LLM 67B released 2023-11-29; month approximate
    "opt": date(2021, 12, 1),  # metaseq OPT chronicles: October 2021 to January 2022
    "falcon-7b": date(2023, 3, 1),  # falcon-7b model card: "early March 2023, about two weeks"
    "falcon-40b": date(2023, 1, 1),  # falcon-40b model card: "started Dec 2022, took two months"
    "palm": date(2022, 1, 1),  # PaLM paper 2022-04 (arXiv 2204.02311); training before: approximate
    "megatron-2021": date(2021, 4, 1),  # Narayanan et al., arXiv 2104.04473 (April 2021)
    "mlperf31": date(2023, 10, 1),  # MLPerf Training v3.1, NGC 23.09 container, results 2023-11-08
    # MosaicML's first H100 benchmarks ("Benchmarking LLMs on NVIDIA H100 GPUs with CoreWeave",
    # spring 2023, while MPT-7B was new) and the llm-foundry tables of 2023; month approximate.
    "llmfoundry": date(2023, 6, 1),
    "megatronbridge": date(2025, 11, 1),  # Megatron-Bridge 25.11 container
}


def run_date(case_id: str) -> date:
    """The date of the run a row describes (``RUN_DATES`` by longest matching prefix)."""
    keys = [k for k in RUN_DATES if case_id.startswith(k)]
    if not keys:
        msg = f"no run date for {case_id!r}: add it to RUN_DATES with its source"
        raise KeyError(msg)
    return RUN_DATES[max(keys, key=len)]


# Cluster each row ran on, as a catalog instance with a comparable network.
A100_1600 = {
    "provider": "azure",
    "instance": "Standard_ND96amsr_A100_v4",
}  # 8x200 Gbps IB (Meta RSC, Selene, MosaicML RoCE)
A100_40_1600 = {"provider": "azure", "instance": "Standard_ND96asr_v4"}
H100 = {"provider": "aws", "instance": "p5.48xlarge"}  # 8x400 Gbps
H800 = {"provider": "aws", "instance": "h800-8x-gpu-hour"}
TPU4 = {"provider": "gcp", "instance": "tpu-v4"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One usable row: inputs, what was published, and which kind of figure it is."""

    id: str
    kind: str  # "throughput" (model TFLOP/s per GPU) or "whole_run" (GPU-hours incl. overheads)
    published: float
    params: float
    active_params: float | None
    tokens: float
    gpus: int
    cluster: dict[str, str]
    precision: str
    seq_len: int
    batch_tokens: float
    shape: tuple[int, int]
    recompute: bool | None = None
    fused_attention: bool = True
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _notes(row: dict[str, str]) -> dict[str, str]:
    out = {}
    for part in row["notes"].split(";"):
        if "=" in part:
            k, _, v = part.strip().partition("=")
            out[k.strip()] = v.strip()
    return out


def _mpt(name: str) -> str:
    return "mpt-" + name.split("-")[1].removeprefix("mpt")


def cases() -> Iterator[Case]:
    """Every row the benchmark can use, with the reason for each conversion in ``note``."""
    with CSV.open(encoding="utf-8", newline="") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    for rid, r in rows.items():
        n = _notes(r)
        params = float(r["params_b"]) * 1e9
        active = float(r["active_params_b"]) * 1e9 if r["active_params_b"] else None
        seq = int(r["seq_len"]) if r["seq_len"] else 2048
        gpus = int(r["gpu_count"]) if r["gpu_count"] else 0
        if rid.startswith("llama3-405b-cfg"):
            yield Case(id=rid, kind="throughput", published=float(r["mfu"]) * 989, params=params, active_params=None,
                       tokens=1e12, gpus=gpus, cluster=H100, precision="bf16", seq_len=seq, batch_tokens=2048 * 8192.0,
                       shape=SHAPES["llama3-405b"], note="BF16 MFU x 989")  # fmt: skip
        elif rid.startswith("megatron-2021") and not rid.endswith("proj"):
            size = rid.split("-")[2].replace("p", ".")
            batch = float(r["notes"].split("batch=")[1].split()[0])
            yield Case(id=rid, kind="throughput", published=float(r["tflops_per_gpu"]) * 0.75, params=params,
                       active_params=None, tokens=1e12, gpus=gpus, cluster=A100_1600, precision="bf16", seq_len=seq,
                       batch_tokens=batch * seq, shape=SHAPES[f"megatron-{size}"], recompute=True,
                       fused_attention=False, note="HFU-like TFLOP/s x 3/4 (recompute)")  # fmt: skip
        elif rid == "megatron-2021-gpt3-175b-proj":
            yield Case(id=rid, kind="throughput", published=140 * 0.75, params=params, active_params=None,
                       tokens=1e12, gpus=gpus, cluster=A100_1600, precision="bf16", seq_len=seq,
                       batch_tokens=1536 * seq, shape=SHAPES["gpt3-175b"], recompute=True, fused_attention=False,
                       note="projection's measured 140 TFLOP/s x 3/4 (recompute)")  # fmt: skip
        elif rid.startswith("mlperf31"):
            yield Case(id=rid, kind="throughput", published=float(n["tok_s_gpu"]), params=params, active_params=None,
                       tokens=1e12, gpus=gpus, cluster=H100, precision="fp8", seq_len=seq, batch_tokens=2048 * seq,
                       shape=SHAPES["gpt3-175b"], extra={"unit": "tok/s"},
                       note="tokens/s/GPU (resumed checkpoint: throughput only)")  # fmt: skip
        elif rid.startswith("llmfoundry"):
            fp8 = "fp8" in r["precision"]
            peak = 312 if r["gpu"].startswith("A100") else (1979 if fp8 else 989)
            cl = (
                A100_1600
                if r["gpu"] == "A100-80GB"
                else A100_40_1600
                if r["gpu"] == "A100-40GB"
                else H100
            )
            yield Case(id=rid, kind="throughput", published=float(r["mfu"]) * peak, params=params, active_params=None,
                       tokens=1e12, gpus=gpus, cluster=cl, precision="fp8" if fp8 else "bf16", seq_len=seq,
                       batch_tokens=float(n["global_batch_tokens"]), shape=SHAPES[_mpt(rid)],
                       recompute=n.get("activation_checkpointing") == "True", note=f"MFU x {peak} (incl. attention)")  # fmt: skip
        elif rid.startswith("megatronbridge"):
            size = "llama3-405b" if "405b" in rid else "llama3-70b" if "70b" in rid else "llama3-8b"
            gbs = float(r["notes"].split("GBS ")[1].split()[0])
            yield Case(id=rid, kind="throughput", published=float(n["tok_s_gpu"]), params=params, active_params=None,
                       tokens=1e12, gpus=gpus, cluster=H100, precision="fp8", seq_len=seq, batch_tokens=gbs * seq,
                       shape=SHAPES[size], extra={"unit": "tok/s"}, note="tokens/s/GPU (FP8)")  # fmt: skip
        elif rid.startswith("torchtitan"):
            continue  # non-standard 500 W H100 with HBM2e: not a catalog accelerator
        elif rid in {"llama2-7b", "llama1-7b", "llama1-13b"}:
            shape = SHAPES["llama-13b" if "13b" in rid else "llama-7b"]
            yield Case(id=rid, kind="whole_run", published=float(r["gpu_hours"]), params=params, active_params=None,
                       tokens=float(r["tokens_b"]) * 1e9, gpus=2048, cluster=A100_1600, precision="bf16",
                       seq_len=int(r["seq_len"] or 2048), batch_tokens=4e6, shape=shape,
                       note="GPU count not published: 2048 A100 assumed (LLaMA-65B's cluster)")  # fmt: skip
        elif rid == "opt-175b":
            yield Case(id=rid, kind="whole_run", published=float(r["gpu_hours"]), params=params, active_params=None,
                       tokens=300e9, gpus=992, cluster=A100_1600, precision="bf16", seq_len=2048, batch_tokens=2e6,
                       shape=SHAPES["opt-175b"], recompute=True, fused_attention=False,
                       note="GPU-hours are LLaMA-1 authors' 992 x 34 days; recompute: chronicles' 4.30e23 FLOPs = 4/3 x model FLOPs")  # fmt: skip
        elif rid.startswith("falcon"):
            cl = {"provider": "aws", "instance": "p4d.24xlarge"}
            yield Case(id=rid, kind="whole_run", published=gpus * float(r["wall_hours"]), params=params,
                       active_params=None, tokens=float(r["tokens_b"]) * 1e9, gpus=gpus, cluster=cl, precision="bf16",
                       seq_len=2048, batch_tokens=4.7e6 if "7b" in rid else 2.4e6, shape=SHAPES[rid],
                       note="384 x approximate wall hours (P4d)")  # fmt: skip
        elif rid == "palm-540b":
            yield Case(id=rid, kind="whole_run", published=float(r["gpu_hours"]), params=params, active_params=None,
                       tokens=780e9, gpus=6144, cluster=TPU4, precision="bf16", seq_len=2048, batch_tokens=4e6,
                       shape=SHAPES["palm-540b"], note="chip-hours; 6144 TPU v4")  # fmt: skip
        elif rid.startswith("deepseek"):
            v2 = "v2" in rid
            yield Case(id=rid, kind="whole_run", published=float(r["gpu_hours"]), params=params, active_params=active,
                       tokens=1e12, gpus=2048, cluster=H800, precision="bf16", seq_len=4096,
                       batch_tokens=(9216 if v2 else 4608) * 4096.0,
                       shape=SHAPES["deepseek-v2" if v2 else "deepseek-67b"],
                       note="per 1T tokens; 2048 H800 assumed (DeepSeek-V3's cluster)")  # fmt: skip


def predict(case: Case, catalog: Catalog, fit: FitParams | None = None) -> float:
    """trainbill's figure for the case, in the unit of ``case.published``."""
    layers, d = case.shape
    if case.kind == "whole_run":
        model: dict[str, Any] = {"params": case.params, "tokens": case.tokens, "precision": case.precision,
                                 "seq_len": case.seq_len, "global_batch_tokens": case.batch_tokens,
                                 "layers": layers, "d_model": d}  # fmt: skip
        if case.active_params:
            model["active_params"] = case.active_params
        # Dated the day of the run, so usage_for's software age is the run's; only usage (no
        # prices, which do not go back to 2021) is computed.
        plan = plan_from_dict({"model": model, "cluster": {**case.cluster, "gpus": case.gpus},
                               "prices": {"as_of": run_date(case.id).isoformat()}})  # fmt: skip
        return _whole_run_with(plan, catalog, fit, case.recompute, case.fused_attention)
    inst = catalog.instance(case.cluster["instance"])
    acc = catalog.accelerator(inst.accelerator)
    nodes = -(-case.gpus // inst.accelerator_count)
    age = software_age_years(acc, run_date(case.id))
    est = estimate_time(
        catalog=catalog, accelerator=acc, instance=inst, nodes=nodes, precision=case.precision, hours=None,
        params=case.params, active_params=case.active_params, tokens=case.tokens,
        global_batch_tokens=case.batch_tokens, seq_len=case.seq_len, layers=layers, d_model=d,
        straggler_cv=float(catalog.value("reliability.straggler_cv")), recompute=case.recompute, fit=fit,
        fused_attention=case.fused_attention, software_age_years=age,
    )  # fmt: skip
    assert est.flops is not None
    seconds = est.compute_hours * (1.0 + est.sync_stall_fraction) * 3600.0
    gpus = nodes * inst.accelerator_count
    if case.extra.get("unit") == "tok/s":
        return case.tokens / seconds / gpus
    return est.flops / seconds / gpus / 1e12


def _whole_run_with(plan: Any, catalog: Catalog, fit: FitParams | None, recompute: bool | None,
                    fused_attention: bool = True) -> float:
    """Whole-run GPU-hours with candidate fit parameters (the fit script's inner loop) and what
    the run's paper states about recompute and attention (a plan has no field for either)."""
    import trainbill.usage as usage_mod

    original = usage_mod.estimate_time

    def patched(**kw: Any) -> Any:
        # recompute=None and fused attention are estimate_time's own defaults.
        return original(**kw, fit=fit, recompute=recompute, fused_attention=fused_attention)

    usage_mod.estimate_time = patched  # type: ignore[assignment]
    try:
        u = usage_mod.usage_for(plan, catalog, today=plan.prices.as_of)
    finally:
        usage_mod.estimate_time = original
    return u.wall_hours * u.gpus
