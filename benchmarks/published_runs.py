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
* Whole runs added for issue #18 are table-driven (``WHOLE_RUNS``): each entry says which shape,
  cluster, GPU count, batch and sequence the case uses and which of them are assumptions.
* Every row carries a ``source_key`` (one per independent document) so a validation can leave
  out a whole source, not just a row.

Model shapes (layers, d_model) are the published architectures, cited per case.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
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
    "llama-33b": (60, 6656),  # arXiv 2302.13971 Table 2
    "llama-65b": (80, 8192),  # arXiv 2302.13971 Table 2
    "llama2-70b": (80, 8192),  # Llama 2 paper arXiv 2307.09288 / meta-llama/Llama-2-70b config.json
    "llama32-1b": (16, 2048),  # meta-llama/Llama-3.2-1B config.json
    "llama32-3b": (28, 3072),  # meta-llama/Llama-3.2-3B config.json
    "llama4-scout": (48, 5120),  # meta-llama/Llama-4-Scout-17B-16E config.json (text_config)
    "llama4-maverick": (48, 5120),  # meta-llama/Llama-4-Maverick-17B-128E config.json (text_config)
    "deepseek-v3": (61, 7168),  # arXiv 2412.19437 Sec. 4.2 (61 layers, hidden 7168)
    "bloom-176b": (70, 14336),  # bigscience/bloom model card (70 layers, hidden 14336)
    "gpt-neox-20b": (44, 6144),  # arXiv 2204.06745 Table 1 (44 layers, d_model 6144)
    "falcon-180b": (80, 14848),  # tiiuae/falcon-180B config.json (num_hidden_layers, hidden_size)
    "starcoderbase-15b": (40, 6144),  # bigcode/starcoderbase config.json (n_layer, n_embd)
    "tinyllama-1.1b": (22, 2048),  # jzhang38/TinyLlama README 'Training Details'
    "phi-2": (32, 2560),  # microsoft/phi-2 config.json (num_hidden_layers, hidden_size)
    "phi-3-mini": (32, 3072),  # Phi-3 report arXiv 2404.14219 Sec. 2 (3072 hidden, 32 layers)
    "phi-3-medium": (40, 5120),  # Phi-3 report arXiv 2404.14219 Sec. 2 (40 layers, 5120 embedding)
    "phi-4": (40, 5120),  # microsoft/phi-4 config.json (40 blocks, 5120 embedding)
    "grin-moe": (32, 4096),  # microsoft/GRIN-MoE config.json (32 layers, hidden 4096)
    "granite-3.0-8b": (40, 4096),  # ibm-granite/granite-3.0-8b-base config.json
    "smollm3-3b": (36, 2048),  # HuggingFaceTB/SmolLM3-3B config.json (36 layers, hidden 2048)
    "santacoder-1.1b": (24, 2048),  # bigcode/santacoder config.json (n_layer 24, n_embd 2048)
    "glm-130b": (70, 12288),  # apxml.com/models/glm-130b (70 layers, hidden 12288)
    "stablelm-3b-4e1t": (32, 2560),  # stabilityai/stablelm-3b-4e1t card 'Model Architecture'
    "jetmoe-8b": (24, 2048),  # research.myshell.ai/jetmoe (24 blocks); hidden 2048: 3rd-party
    "llama2-34b": (48, 8192),  # codellama/CodeLlama-34b-hf config.json (from Llama 2 34B)
    "gpt2-1558m": (48, 1600),  # Radford et al. 2019 Table 2; llm.c run_gpt2_1558M.sh depth 48
    "phi-1": (24, 2048),  # arXiv 2306.11644 (24 layers, hidden 2048)
    "biomedlm-2.7b": (32, 2560),  # stanford-crfm/BioMedLM card (32 layers, hidden 2560)
    # trainbill's own H200 measurements (benchmarks/results/h200-2026-12-04/): the configs it ran.
    "h200-eager-d1024-l24": (24, 1024),
    "h200-eager-d2048-l18": (18, 2048),
    "h200-eager-d4096-l8": (8, 4096),
    # ... and benchmarks/results/h200-2026-12-04-sweep/ (gpu_sweep.py: longer sequences, wider).
    "h200-eager-d2048-l18-s8192": (18, 2048),
    "h200-eager-d2048-l18-s16384": (18, 2048),
    "h200-eager-d8192-l4": (4, 8192),
}
# When each run happened (row-id prefix -> date), from its source.
RUN_DATES: dict[str, date] = {
    "llama2": date(2023, 4, 1),  # Llama 2 model card: "trained between January 2023 and July 2023"
    "llama1": date(2023, 1, 1),  # LLaMA model card: "trained between December 2022 and Feb. 2023"
    "llama3": date(
        2024, 4, 1
    ),  # Llama 3 pretraining, early 2024 (paper 2024-07, models 2024-04-18)
    "deepseek-v2": date(
        2024, 3, 1
    ),  # DeepSeek-V2 paper 2024-05 (arXiv 2405.04434); month approximate
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
    # Whole runs of issue #18: middle of the stated training period, else the publication month.
    "llama31": date(2024, 7, 1),  # Llama 3.1 card: released 2024-07-23, no training period given
    "llama32": date(2024, 9, 1),  # Llama 3.2 card: released 2024-09-25
    "llama4": date(2025, 4, 1),  # Llama 4 card: released 2025-04-05
    "deepseek-v3": date(2024, 12, 1),  # DeepSeek-V3 report, arXiv 2412.19437 (December 2024)
    "bloom-176b": date(2022, 5, 8),  # bloom card: 2022-03-11 to 2022-07-05, midpoint
    "gpt-neox-20b": date(2022, 4, 1),  # arXiv 2204.06745 (April 2022)
    "falcon-180b": date(2023, 9, 1),  # Hugging Face 'Falcon 180B' blog, September 2023
    "mpt-7b": date(2023, 5, 1),  # MosaicML 'Introducing MPT-7B', 2023-05-05
    "mpt-1b": date(2023, 5, 1),  # mpt-1b-redpajama-200b card, spring 2023 as MPT-7B: approximate
    "starcoderbase": date(2023, 3, 1),  # bigcode governance card: model cycle January to April 2023
    "tinyllama": date(2023, 10, 16),  # README: 2023-09-01 to 3T planned 2023-12-01, midpoint
    "phi-2": date(2023, 12, 1),  # phi-2 card, released December 2023
    "phi-3-mini": date(2024, 6, 1),  # card: trained May to June 2024
    "phi-3-medium": date(2024, 3, 15),  # card: trained February to April 2024
    "phi-3.5-mini": date(2024, 7, 15),  # card: trained June to August 2024
    "phi-4": date(2024, 11, 1),  # card: October to November 2024
    "grin-moe": date(2024, 5, 15),  # card: trained April to June 2024
    "granite-3.0": date(2024, 10, 1),  # Granite 3.0 report, October 2024
    "smollm3": date(2025, 7, 1),  # SmolLM3 blog, July 2025
    "santacoder": date(2022, 12, 1),  # SantaCoder, arXiv 2301.03988 (2023-01): approximate
    "glm-130b": date(2022, 6, 1),  # 60 days before the 2022-08-04 release: approximate
    "stablelm-3b-4e1t": date(2023, 9, 7),  # card: began 2023-08-23, ~30 days: midpoint
    "jetmoe": date(2024, 3, 1),  # JetMoE report arXiv 2404.07413 (April 2024): approximate
    "llmc-gpt2-1558m": date(2024, 7, 1),  # llm.c discussion #677, July 2024: month approximate
    "h200-eager": date(2026, 12, 4),  # benchmarks/results/h200-2026-12-04 (measured that day)
    "phi-1": date(2023, 5, 1),  # 'Textbooks Are All You Need', June 2023: approximate
    "biomedlm": date(2022, 11, 1),  # MosaicML blog, December 2022: approximate
    # Whole runs added for issue #43 item 5 (2026-12-05): middle of the card's training period.
    "phi-3-mini-apr2024": date(2024, 3, 15),  # card (April 2024): February to April 2024
    "phi-3.5-moe": date(2024, 6, 15),  # card: trained between April and August 2024
    "phi-4-mini": date(2024, 12, 1),  # card: trained between November and December 2024
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
H200 = {"provider": "aws", "instance": "p5en.48xlarge"}  # 8x H200 141 GB
H800 = {"provider": "aws", "instance": "h800-8x-gpu-hour"}
TPU4 = {"provider": "gcp", "instance": "tpu-v4"}


A100_40_P4D = {"provider": "aws", "instance": "p4d.24xlarge"}  # AWS P4d, 4x100 Gbps EFA (Falcon)
V100 = {"provider": "aws", "instance": "p3dn.24xlarge"}  # 8x V100 32GB, 100 Gbps


@dataclass(frozen=True, slots=True, kw_only=True)
class WholeRun:
    """How a whole-run row becomes a case: what the source gives and what is assumed.

    ``gpus`` None takes the row's ``gpu_count``; ``seq_len`` None takes the row's ``seq_len``.
    ``note`` names every assumption (GPU count, batch, sequence) the source does not state.
    """

    shape: str
    cluster: dict[str, str]
    batch_tokens: float
    note: str
    gpus: int | None = None
    seq_len: int | None = None
    precision: str = "bf16"
    recompute: bool | None = None
    fused_attention: bool = True


# Meta states no GPU count below 405B; its largest stated cluster per generation stands in.
_META_A100 = "GPU count not published: 2048 A100 assumed (LLaMA-65B's cluster)"
_META_H100 = (
    "GPU count not published: 2048 H100 assumed (as for Meta's A100 rows); batch 16M tokens "
    "assumed (Llama 3 405B, arXiv 2407.21783)"
)
_PHI = "batch not published: 4M tokens assumed"
# fmt: off
WHOLE_RUNS: dict[str, WholeRun] = {
    "llama2-13b": WholeRun(shape="llama-13b", cluster=A100_1600, gpus=2048, batch_tokens=4e6,
                           note=_META_A100),
    "llama2-70b": WholeRun(shape="llama2-70b", cluster=A100_1600, gpus=2048, batch_tokens=4e6,
                           note=_META_A100),
    "llama1-33b": WholeRun(shape="llama-33b", cluster=A100_1600, gpus=2048, seq_len=2048,
                           batch_tokens=4e6, note=_META_A100),
    "llama1-65b": WholeRun(shape="llama-65b", cluster=A100_1600, seq_len=2048, batch_tokens=4e6,
                           note="2048 A100 (Sec. 2.4); GPU-hours Table 15"),
    "llama3-8b": WholeRun(shape="llama3-8b", cluster=H100, gpus=2048, batch_tokens=16e6,
                          note=_META_H100),
    "llama3-70b": WholeRun(shape="llama3-70b", cluster=H100, gpus=2048, batch_tokens=16e6,
                           note=_META_H100),
    "llama31-8b": WholeRun(shape="llama3-8b", cluster=H100, gpus=2048, seq_len=8192,
                           batch_tokens=16e6,
                           note=_META_H100 + "; 8K sequence as the 405B main stage"),
    "llama31-70b": WholeRun(shape="llama3-70b", cluster=H100, gpus=2048, seq_len=8192,
                            batch_tokens=16e6,
                            note=_META_H100 + "; 8K sequence as the 405B main stage"),
    "llama31-405b": WholeRun(shape="llama3-405b", cluster=H100, batch_tokens=2048 * 8192.0,
                             note="up to 16,384 H100 (paper); card GPU-hours; batch 2,048 "
                                  "sequences × 8,192 = 16.8M (paper Table 4, the 16K-GPU stage)"),
    "llama32-1b": WholeRun(shape="llama32-1b", cluster=H100, gpus=2048, seq_len=8192,
                           batch_tokens=16e6,
                           note=_META_H100 + "; 8K sequence assumed; distillation logits not "
                                             "counted"),
    "llama32-3b": WholeRun(shape="llama32-3b", cluster=H100, gpus=2048, seq_len=8192,
                           batch_tokens=16e6,
                           note=_META_H100 + "; 8K sequence assumed; distillation logits not "
                                             "counted"),
    "llama4-scout": WholeRun(shape="llama4-scout", cluster=H100, gpus=2048, seq_len=8192,
                             batch_tokens=16e6,
                             note=_META_H100 + "; 8K sequence assumed; MoE: 17B active"),
    "llama4-maverick": WholeRun(shape="llama4-maverick", cluster=H100, gpus=2048, seq_len=8192,
                                batch_tokens=16e6,
                                note=_META_H100 + "; 8K sequence assumed; MoE: 17B active"),
    "deepseek-v3": WholeRun(shape="deepseek-v3", cluster=H800, precision="fp8",
                            batch_tokens=15360 * 4096.0,
                            note="pre-training GPU-hours, 2048 H800, FP8; batch 15360 x 4K "
                                 "(final, after ramp)"),
    "bloom-176b": WholeRun(shape="bloom-176b", cluster=A100_1600, batch_tokens=2048 * 2048.0,
                           fused_attention=False,
                           note="384 A100 (Jean Zay, Omni-Path; stand-in 8x200G IB); batch 2048 "
                                "seqs assumed (BLOOM paper, not checked); 2022 kernels: unfused "
                                "attention"),
    "gpt-neox-20b": WholeRun(shape="gpt-neox-20b", cluster=A100_40_1600, batch_tokens=1538 * 2048.0,
                             fused_attention=False,
                             note="96 A100-40GB x 1830 h; batch 1538 x 2048 (paper); fp16 run as "
                                  "bf16; unfused attention"),
    "falcon-180b": WholeRun(shape="falcon-180b", cluster=A100_40_P4D, batch_tokens=4e6,
                            note="'up to 4096' A100-40GB on P4d; ~7M GPU-hours; batch not "
                                 "checked: 4M assumed"),
    "mpt-7b": WholeRun(shape="mpt-7b", cluster=A100_40_1600, batch_tokens=4e6,
                       note="440 A100-40GB x ~9.5 days (MosaicML RoCE, stand-in 8x200G); batch "
                            "not checked: 4M assumed"),
    "mpt-1b": WholeRun(shape="mpt-1b", cluster=A100_40_1600, batch_tokens=4e6,
                       note="440 A100-40GB x ~half a day (12 h assumed); batch not checked: 4M "
                            "assumed"),
    "starcoderbase-15b": WholeRun(shape="starcoderbase-15b", cluster=A100_1600,
                                  batch_tokens=512 * 8192.0,
                                  note="512 A100-80GB x 24 days; batch 512 x 8K (paper)"),
    "tinyllama-1.1b": WholeRun(shape="tinyllama-1.1b", cluster=A100_40_1600,
                               batch_tokens=2048 * 1024.0,
                               note="16 A100-40GB x 90 days (the plan stated at launch); batch 2M "
                                    "(README)"),
    "phi-2": WholeRun(shape="phi-2", cluster=A100_1600, batch_tokens=4e6,
                      note="96 A100-80GB x 14 days; " + _PHI),
    "phi-3-mini": WholeRun(shape="phi-3-mini", cluster=H100, seq_len=4096, batch_tokens=4e6,
                           note="512 H100 x 10 days; 4K sequence (report's default context); "
                                + _PHI),
    "phi-3-medium": WholeRun(shape="phi-3-medium", cluster=H100, batch_tokens=4e6,
                             note="512 H100 x 42 days; " + _PHI),
    "phi-3.5-mini": WholeRun(shape="phi-3-mini", cluster=H100, seq_len=4096, batch_tokens=4e6,
                             note="512 H100 x 10 days; 4K sequence assumed as Phi-3-mini; " + _PHI),
    "phi-4": WholeRun(shape="phi-4", cluster=H100, seq_len=4096, batch_tokens=4e6,
                      note="1920 H100 x 21 days; 4K sequence assumed (card's 16K is the final "
                           "context); " + _PHI),
    "grin-moe": WholeRun(shape="grin-moe", cluster=H100, batch_tokens=4e6,
                         note="512 H100 x 18 days; MoE 6.6B active; " + _PHI),
    "granite-3.0-8b": WholeRun(shape="granite-3.0-8b", cluster=H100, gpus=2048, batch_tokens=4e6,
                               note="GPU count not published: 2048 H100 assumed; batch not "
                                    "checked: 4M assumed"),
    "smollm3-3b": WholeRun(shape="smollm3-3b", cluster=H100, batch_tokens=2359296.0,
                           note="384 H100 x 24 days; batch 2,359,296 tokens (checkpoint card)"),
    "santacoder-1.1b": WholeRun(shape="santacoder-1.1b", cluster=V100, batch_tokens=192 * 2048.0,
                                fused_attention=False, precision="fp16",
                                note="96 V100 x 6.2 days (cluster not stated: p3dn stands in); "
                                     "batch 192 x 2048; fp16 as the card states (the V100's "
                                     "FP16 tensor rate, its bf16 column's figure too); V100 has "
                                     "no FlashAttention: unfused"),
    "glm-130b": WholeRun(shape="glm-130b", cluster=A100_40_1600, batch_tokens=4e6,
                         fused_attention=False,
                         note="768 A100-40GB (96 DGX-A100) x 60 days; stand-in 8x200G IB; batch "
                              "not checked: 4M assumed; 2022 software: unfused attention"),
    "stablelm-3b-4e1t": WholeRun(shape="stablelm-3b-4e1t", cluster=A100_40_P4D, batch_tokens=4e6,
                                 note="256 A100-40GB on P4d x ~30 days; batch not checked: 4M "
                                      "assumed"),
    "jetmoe-8b": WholeRun(shape="jetmoe-8b", cluster=H100, seq_len=4096, batch_tokens=4e6,
                          note="96 H100; paper's 30,000 GPU-hours; MoE 2.2B active; batch and "
                               "sequence not checked: 4M and 4096 assumed"),
    "llama2-34b": WholeRun(shape="llama2-34b", cluster=A100_1600, gpus=2048, batch_tokens=4e6,
                           note=_META_A100),
    "llmc-gpt2-1558m": WholeRun(shape="gpt2-1558m", cluster=H100, batch_tokens=1048576.0,
                                note="one 8x H100 node x 24 h; batch 1,048,576 tokens (script)"),
    "phi-1-base": WholeRun(shape="phi-1", cluster=A100_1600, batch_tokens=4e6,
                           note="8 A100 x 4 days, paper's 770 GPU-hours; batch not checked: 4M "
                                "assumed"),
    "biomedlm-2.7b": WholeRun(shape="biomedlm-2.7b", cluster=A100_40_1600,
                              batch_tokens=1024 * 1024.0,
                              note="128 A100-40GB (MosaicML Cloud, stand-in 8x200G) x ~6.25 "
                                   "days; batch 1024 x 1024 (card)"),
    # Issue #43 item 5 (2026-12-05): three more Phi cards, each 512 GPUs (the 129-1,024 bucket).
    "phi-3-mini-apr2024": WholeRun(shape="phi-3-mini", cluster=H100, batch_tokens=4e6,
                                   note="512 H100 x 7 days (April 2024 card, 4K context); " + _PHI),
    "phi-3.5-moe": WholeRun(shape="grin-moe", cluster=H100, seq_len=4096, batch_tokens=4e6,
                            note="512 H100 x 23 days; MoE 6.6B active, GRIN MoE's 16x3.8B "
                                 "layout and 4K sequence assumed; " + _PHI),
    "phi-4-mini": WholeRun(shape="phi-3-mini", cluster=A100_1600, batch_tokens=4e6,
                           note="512 A100-80GB x 21 days; Phi-3.5-mini's 32 x 3072 shape (the "
                                "card names only vocabulary, GQA and tied embeddings as changes); "
                                "4K sequence assumed; " + _PHI),
}
# fmt: on


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
    source_key: str = ""  # one per independent document, for leave-one-source-out validation
    #: What a whole run's published GPU-hours cover (``HOURS_COVERS``); "" for throughput rows.
    hours_cover: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


#: What a whole run's published GPU-hours cover (the CSV's ``gpu_hours_cover``), from its source:
#: ``training_run`` one pre-training run with its own restarts, stalls and evaluations (what
#: trainbill forecasts); ``model_total`` the source's total GPU time for the released model, which
#: may include stages it does not split out (long context, annealing, post-training: Meta's Llama 3
#: and 3.1 cards, the Phi cards); ``with_distillation`` also pruning from a larger model and
#: training on its logits (Llama 3.2 1B/3B); ``planned`` a schedule stated before the run
#: (TinyLlama).
#: ``benchmarks/accuracy.py`` reports the ``training_run`` rows apart from the rest.
HOURS_COVERS = ("training_run", "model_total", "with_distillation", "planned")


def _notes(row: dict[str, str]) -> dict[str, str]:
    out = {}
    for part in row["notes"].split(";"):
        if "=" in part:
            k, _, v = part.strip().partition("=")
            out[k.strip()] = v.strip()
    return out


def _mpt(name: str) -> str:
    return "mpt-" + name.split("-")[1].removeprefix("mpt")


def _rows() -> dict[str, dict[str, str]]:
    with CSV.open(encoding="utf-8", newline="") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    for rid, r in rows.items():
        if not (r.get("source_key") or "").strip():
            msg = (
                f"{CSV.name}: row {rid!r} has no source_key (one key per independent source "
                "document)"
            )
            raise ValueError(msg)
    return rows


def gpu_counts_published() -> frozenset[str]:
    """Ids of the rows whose source states the GPU count (the CSV's ``gpu_count``). For the
    others the case's count is an assumption its note names (Meta states none below 405B), so
    the as-typed forecast of such a row is scored on a count the run may not have used."""
    return frozenset(rid for rid, r in _rows().items() if r["gpu_count"].strip())


def cases() -> Iterator[Case]:
    """Every row the benchmark can use, with the reason for each conversion in ``note``."""
    rows = _rows()
    for c in _cases(rows):
        cover = (rows[c.id].get("gpu_hours_cover") or "").strip()
        if c.kind == "whole_run" and cover not in HOURS_COVERS:
            msg = (
                f"{CSV.name}: row {c.id!r} gpu_hours_cover is {cover!r}; a whole run needs one of "
                f"{', '.join(HOURS_COVERS)}"
            )
            raise ValueError(msg)
        yield replace(c, source_key=rows[c.id]["source_key"], hours_cover=cover)


def _whole_run(rid: str, r: dict[str, str], w: WholeRun) -> Case:
    """A ``WHOLE_RUNS`` row as a case: the source's GPU-hours against the plan's."""
    active = float(r["active_params_b"]) * 1e9 if r["active_params_b"] else None
    return Case(
        id=rid,
        kind="whole_run",
        published=float(r["gpu_hours"]),
        params=float(r["params_b"]) * 1e9,
        active_params=active,
        tokens=float(r["tokens_b"]) * 1e9,
        gpus=w.gpus or int(r["gpu_count"]),
        cluster=w.cluster,
        precision=w.precision,
        seq_len=w.seq_len or int(r["seq_len"]),
        batch_tokens=w.batch_tokens,
        shape=SHAPES[w.shape],
        recompute=w.recompute,
        fused_attention=w.fused_attention,
        note=w.note,
    )


def _cases(rows: dict[str, dict[str, str]]) -> Iterator[Case]:
    for rid, r in rows.items():
        n = _notes(r)
        params = float(r["params_b"]) * 1e9
        active = float(r["active_params_b"]) * 1e9 if r["active_params_b"] else None
        seq = int(r["seq_len"]) if r["seq_len"] else 2048
        gpus = int(r["gpu_count"]) if r["gpu_count"] else 0
        if rid in WHOLE_RUNS:
            yield _whole_run(rid, r, WHOLE_RUNS[rid])
        elif rid.startswith("llama3-405b-cfg"):
            yield Case(
                id=rid,
                kind="throughput",
                published=float(r["mfu"]) * 989,
                params=params,
                active_params=None,
                tokens=1e12,
                gpus=gpus,
                cluster=H100,
                precision="bf16",
                seq_len=seq,
                batch_tokens=2048 * 8192.0,
                shape=SHAPES["llama3-405b"],
                note="BF16 MFU x 989",
            )
        elif rid.startswith("megatron-2021") and not rid.endswith("proj"):
            size = rid.split("-")[2].replace("p", ".")
            batch = float(r["notes"].split("batch=")[1].split()[0])
            yield Case(
                id=rid,
                kind="throughput",
                published=float(r["tflops_per_gpu"]) * 0.75,
                params=params,
                active_params=None,
                tokens=1e12,
                gpus=gpus,
                cluster=A100_1600,
                precision="bf16",
                seq_len=seq,
                batch_tokens=batch * seq,
                shape=SHAPES[f"megatron-{size}"],
                recompute=True,
                fused_attention=False,
                note="HFU-like TFLOP/s x 3/4 (recompute)",
            )
        elif rid == "megatron-2021-gpt3-175b-proj":
            yield Case(
                id=rid,
                kind="throughput",
                published=140 * 0.75,
                params=params,
                active_params=None,
                tokens=1e12,
                gpus=gpus,
                cluster=A100_1600,
                precision="bf16",
                seq_len=seq,
                batch_tokens=1536 * seq,
                shape=SHAPES["gpt3-175b"],
                recompute=True,
                fused_attention=False,
                note="projection's measured 140 TFLOP/s x 3/4 (recompute)",
            )
        elif rid.startswith("mlperf31"):
            yield Case(
                id=rid,
                kind="throughput",
                published=float(n["tok_s_gpu"]),
                params=params,
                active_params=None,
                tokens=1e12,
                gpus=gpus,
                cluster=H100,
                precision="fp8",
                seq_len=seq,
                batch_tokens=2048 * seq,
                shape=SHAPES["gpt3-175b"],
                extra={"unit": "tok/s"},
                note="tokens/s/GPU (resumed checkpoint: throughput only)",
            )
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
            yield Case(
                id=rid,
                kind="throughput",
                published=float(r["mfu"]) * peak,
                params=params,
                active_params=None,
                tokens=1e12,
                gpus=gpus,
                cluster=cl,
                precision="fp8" if fp8 else "bf16",
                seq_len=seq,
                batch_tokens=float(n["global_batch_tokens"]),
                shape=SHAPES[_mpt(rid)],
                recompute=n.get("activation_checkpointing") == "True",
                note=f"MFU x {peak} (incl. attention)",
            )
        elif rid.startswith("h200-eager"):
            # One GPU measured; the catalog sells H200 only in 8-GPU nodes, so the case is one
            # node in data parallelism with the same per-GPU batch (its gradient all-reduce over
            # NVLink, ~2 GB of bf16 at 900 GB/s, is milliseconds against 0.2-0.6 s steps).
            layers, d = SHAPES[rid]
            tokens_step = float(n["tokens_per_step"])
            model_flops = (6 * params + 12 * layers * d * seq) * tokens_step
            yield Case(
                id=rid,
                kind="throughput",
                published=model_flops / float(n["step_seconds"]) / 1e12,
                params=params,
                active_params=None,
                tokens=1e12,
                gpus=8,
                cluster=H200,
                precision="bf16",
                seq_len=seq,
                batch_tokens=8 * tokens_step,
                shape=SHAPES[rid],
                recompute=False,
                note="model-FLOP TFLOP/s (6ND + attention, the time model's count) per GPU",
            )
        elif rid.startswith("megatronbridge"):
            size = "llama3-405b" if "405b" in rid else "llama3-70b" if "70b" in rid else "llama3-8b"
            gbs = float(r["notes"].split("GBS ")[1].split()[0])
            yield Case(
                id=rid,
                kind="throughput",
                published=float(n["tok_s_gpu"]),
                params=params,
                active_params=None,
                tokens=1e12,
                gpus=gpus,
                cluster=H100,
                precision="fp8",
                seq_len=seq,
                batch_tokens=gbs * seq,
                shape=SHAPES[size],
                extra={"unit": "tok/s"},
                note="tokens/s/GPU (FP8)",
            )
        elif rid.startswith("torchtitan"):
            continue  # non-standard 500 W H100 with HBM2e: not a catalog accelerator
        elif rid in {"llama2-7b", "llama1-7b", "llama1-13b"}:
            shape = SHAPES["llama-13b" if "13b" in rid else "llama-7b"]
            yield Case(
                id=rid,
                kind="whole_run",
                published=float(r["gpu_hours"]),
                params=params,
                active_params=None,
                tokens=float(r["tokens_b"]) * 1e9,
                gpus=2048,
                cluster=A100_1600,
                precision="bf16",
                seq_len=int(r["seq_len"] or 2048),
                batch_tokens=4e6,
                shape=shape,
                note="GPU count not published: 2048 A100 assumed (LLaMA-65B's cluster)",
            )
        elif rid == "opt-175b":
            yield Case(
                id=rid,
                kind="whole_run",
                published=float(r["gpu_hours"]),
                params=params,
                active_params=None,
                tokens=300e9,
                gpus=992,
                cluster=A100_1600,
                precision="bf16",
                seq_len=2048,
                batch_tokens=2e6,
                shape=SHAPES["opt-175b"],
                recompute=True,
                fused_attention=False,
                note=(
                    "GPU-hours are LLaMA-1 authors' 992 x 34 days; recompute: chronicles' "
                    "4.30e23 FLOPs = 4/3 x model FLOPs"
                ),
            )
        elif rid.startswith("falcon"):
            cl = {"provider": "aws", "instance": "p4d.24xlarge"}
            yield Case(
                id=rid,
                kind="whole_run",
                published=gpus * float(r["wall_hours"]),
                params=params,
                active_params=None,
                tokens=float(r["tokens_b"]) * 1e9,
                gpus=gpus,
                cluster=cl,
                precision="bf16",
                seq_len=2048,
                batch_tokens=4.7e6 if "7b" in rid else 2.4e6,
                shape=SHAPES[rid],
                note="384 x approximate wall hours (P4d)",
            )
        elif rid == "palm-540b":
            yield Case(
                id=rid,
                kind="whole_run",
                published=float(r["gpu_hours"]),
                params=params,
                active_params=None,
                tokens=780e9,
                gpus=6144,
                cluster=TPU4,
                precision="bf16",
                seq_len=2048,
                batch_tokens=4e6,
                shape=SHAPES["palm-540b"],
                note="chip-hours; 6144 TPU v4",
            )
        elif rid.startswith("deepseek"):
            v2 = "v2" in rid
            yield Case(
                id=rid,
                kind="whole_run",
                published=float(r["gpu_hours"]),
                params=params,
                active_params=active,
                tokens=1e12,
                gpus=2048,
                cluster=H800,
                precision="bf16",
                seq_len=4096,
                batch_tokens=(9216 if v2 else 4608) * 4096.0,
                shape=SHAPES["deepseek-v2" if v2 else "deepseek-67b"],
                note="per 1T tokens; 2048 H800 assumed (DeepSeek-V3's cluster)",
            )


def predict(case: Case, catalog: Catalog, fit: FitParams | None = None) -> float:
    """trainbill's figure for the case, in the unit of ``case.published``."""
    layers, d = case.shape
    if case.kind == "whole_run":
        model: dict[str, Any] = {
            "params": case.params,
            "tokens": case.tokens,
            "precision": case.precision,
            "seq_len": case.seq_len,
            "global_batch_tokens": case.batch_tokens,
            "layers": layers,
            "d_model": d,
        }
        if case.active_params:
            model["active_params"] = case.active_params
        # run.date is the day of the run, so usage_for's software age is the run's; only usage is
        # computed, so the price date (today) does not matter, and in-house runs that predate the
        # stand-in instance's cloud launch (PaLM on TPU v4 before its GA) stay valid.
        plan = plan_from_dict({"model": model, "cluster": {**case.cluster, "gpus": case.gpus},
                               "run": {"date": run_date(case.id).isoformat()}})  # fmt: skip
        return _whole_run_with(plan, catalog, fit, case.recompute, case.fused_attention)
    inst = catalog.instance(case.cluster["instance"])
    acc = catalog.accelerator(inst.accelerator)
    nodes = -(-case.gpus // inst.accelerator_count)
    age = software_age_years(acc, run_date(case.id))
    est = estimate_time(
        catalog=catalog,
        accelerator=acc,
        instance=inst,
        nodes=nodes,
        precision=case.precision,
        hours=None,
        params=case.params,
        active_params=case.active_params,
        tokens=case.tokens,
        global_batch_tokens=case.batch_tokens,
        seq_len=case.seq_len,
        layers=layers,
        d_model=d,
        straggler_cv=float(catalog.value("reliability.straggler_cv")),
        recompute=case.recompute,
        fit=fit,
        fused_attention=case.fused_attention,
        software_age_years=age,
    )
    assert est.flops is not None
    seconds = est.compute_hours * (1.0 + est.sync_stall_fraction) * 3600.0
    gpus = nodes * inst.accelerator_count
    if case.extra.get("unit") == "tok/s":
        return case.tokens / seconds / gpus
    return est.flops / seconds / gpus / 1e12


def _whole_run_with(
    plan: Any,
    catalog: Catalog,
    fit: FitParams | None,
    recompute: bool | None,
    fused_attention: bool | None = True,
) -> float:
    """Whole-run GPU-hours with candidate fit parameters (the fit script's inner loop) and what
    the run's paper states about recompute and attention (a plan has no field for either)."""
    import trainbill.usage as usage_mod

    original = usage_mod.estimate_time

    def patched(**kw: Any) -> Any:
        # recompute=None is estimate_time's own default; fused_attention None keeps what
        # usage_for decided from the run's date (time.fused_attention_since), as a typed plan is
        # forecast; a row's paper, where it says, wins.
        kw |= {"fit": fit, "recompute": recompute}
        if fused_attention is not None:
            kw["fused_attention"] = fused_attention
        return original(**kw)

    usage_mod.estimate_time = patched  # type: ignore[assignment]
    try:
        u = usage_mod.usage_for(plan, catalog)
    finally:
        usage_mod.estimate_time = original
    return u.wall_hours * u.gpus


#: The naive calculator every comparison stands beside: 6·N·D FLOPs at 40% of the dense BF16
#: peak (N = active parameters for MoE), no overheads, no layout, no date.
NAIVE_MFU = 0.40


def naive(case: Case, catalog: Catalog) -> float:
    """The naive 6·N·D / (40% MFU) figure for the case, in the unit of ``case.published``."""
    acc = catalog.accelerator(catalog.instance(case.cluster["instance"]).accelerator)
    peak = acc.peak_bf16_tflops * 1e12
    n = case.active_params or case.params
    if case.kind == "whole_run":
        return 6.0 * n * case.tokens / (NAIVE_MFU * peak) / 3600.0
    if case.extra.get("unit") == "tok/s":
        return NAIVE_MFU * peak / (6.0 * n)
    return NAIVE_MFU * peak / 1e12


def typed_plan(
    case: Case, catalog: Catalog, *, software_date: date, run_day: date | None = None
) -> Any:
    """The plan a user builds for a whole-run row from the flags alone
    (``--params --active-params --tokens --gpu --gpus --precision``), dated ``software_date``:
    no layers, width, batch or sequence length, the default cloud's instance for the GPU.
    ``run_day``: also ``--run-date`` (``run.date``), as a user back-testing a past run types it."""
    acc = catalog.instance(case.cluster["instance"]).accelerator
    model: dict[str, Any] = {
        "params": case.params,
        "tokens": case.tokens,
        "precision": case.precision,
    }
    if case.active_params:
        model["active_params"] = case.active_params
    run = {"run": {"date": run_day.isoformat()}} if run_day is not None else {}
    return plan_from_dict({"model": model, "cluster": {"gpu": acc, "gpus": case.gpus},
                           "prices": {"as_of": software_date.isoformat()}, **run})  # fmt: skip


def predict_typed(
    case: Case,
    catalog: Catalog,
    fit: FitParams | None = None,
    *,
    software_date: date,
    dated: bool = False,
) -> float:
    """Whole-run GPU-hours (``time.gpu_hours`` of ``trainbill forecast``) from the flags alone;
    ``dated``: with ``--run-date`` the run's own date (a back-test on its software)."""
    run_day = run_date(case.id) if dated else None
    return _whole_run_with(
        typed_plan(case, catalog, software_date=software_date, run_day=run_day),
        catalog,
        fit,
        None,
        None,
    )
