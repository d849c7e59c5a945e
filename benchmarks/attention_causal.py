"""Time fused (flash) attention causal against full, beside a GEMM of the same machine.

Why: the time model counts attention as 12 · L · d · seq FLOPs per token (Narayanan et al.
2021, Eq. 3: the full seq × seq score matrix). A fused causal kernel skips the blocks above the
diagonal, so it does about half of that work. ``gpu_sweep.py`` saw a 1.04B model's step grow
1.52× from seq 2048 to 16384 at equal tokens, where the full count says 1.88× and the half count
1.47×. This measures the kernel directly: forward + backward of
``scaled_dot_product_attention`` with ``is_causal`` True and False at 32,768 tokens per call
(16 heads of 128, bf16), and a bf16 GEMM for the machine's matmul rate. If causal takes about
half the time of full, the half count is the right one for fused attention.

Run on a GPU machine from the repository root::

    python benchmarks/attention_causal.py --out $OUT/attention.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cuda_timing import median_cuda_seconds, parse_args  # a sibling module

_TOKENS = 32768
_HEADS = 16
_HEAD_DIM = 128


def _gemm_seconds(torch: Any, dev: Any, steps: int) -> float:
    """Median seconds of a (32,768 × 2048) · (2048 × 8192) bf16 GEMM."""
    a = torch.randn(_TOKENS, 2048, device=dev, dtype=torch.bfloat16)
    b = torch.randn(2048, 8192, device=dev, dtype=torch.bfloat16)
    return median_cuda_seconds(torch, lambda: a @ b, warmup=5, steps=steps)


def _attention_seconds(
    torch: Any, F: Any, dev: Any, size: tuple[int, int], causal: bool, steps: int
) -> float:
    """Median seconds of one attention forward + backward at (batch, seq)."""
    batch, seq = size
    shape = (batch, _HEADS, seq, _HEAD_DIM)
    q, k, v = (
        torch.randn(shape, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3)
    )
    grad = torch.randn(shape, device=dev, dtype=torch.bfloat16)

    def call() -> None:
        F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(grad)

    return median_cuda_seconds(torch, call, warmup=3, steps=steps)


def main(argv: list[str] | None = None) -> int:
    """Print one line per sequence length and write the JSON."""
    args = parse_args(__doc__, argv)
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("attention_causal: needs a CUDA device")
        return 2
    dev = torch.device("cuda")
    results: list[dict[str, Any]] = []

    gemm_s = _gemm_seconds(torch, dev, args.steps)
    gemm_tflops = 2 * _TOKENS * 2048 * 8192 / gemm_s / 1e12
    print(f"gemm {_TOKENS}x2048x8192: {gemm_s * 1e3:.2f} ms, {gemm_tflops:.1f} TFLOP/s", flush=True)

    for seq in (2048, 8192, 16384):
        batch = _TOKENS // seq
        row: dict[str, Any] = {"seq_len": seq, "batch": batch}
        # Full score matrix: QK^T and PV forward (2 matmuls of 2·s²·dh each per head),
        # backward 2.5 times the forward (5 matmuls): 3.5 × 4 · b · h · s² · dh.
        full_flops = 3.5 * 4 * batch * _HEADS * seq * seq * _HEAD_DIM
        for causal in (False, True):
            seconds = _attention_seconds(torch, F, dev, (batch, seq), causal, args.steps)
            key = "causal" if causal else "full"
            row[f"{key}_seconds"] = seconds
            row[f"{key}_tflops_full_count"] = full_flops / seconds / 1e12
        row["causal_over_full"] = row["causal_seconds"] / row["full_seconds"]
        results.append(row)
        print(
            f"seq {seq} x batch {batch}: full {row['full_seconds'] * 1e3:.2f} ms "
            f"({row['full_tflops_full_count']:.0f} TFLOP/s), causal "
            f"{row['causal_seconds'] * 1e3:.2f} ms, causal/full {row['causal_over_full']:.3f}",
            flush=True,
        )
        torch.cuda.empty_cache()

    payload = {
        "device_name": torch.cuda.get_device_name(dev),
        "torch_version": str(torch.__version__),
        "gemm": {"seconds": gemm_s, "tflops": gemm_tflops, "shape": [_TOKENS, 2048, 8192]},
        "attention": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
