"""Time FP8 (e4m3) GEMMs against BF16 at transformer shapes on one GPU.

Why: the time model speeds up only the matmul share of an FP8 step, by η_fp8 · peak_fp8 /
peak_bf16 (``time.fit.eta_fp8``, fitted on published FP8 runs). The datasheet ratio is 2; what
a GEMM actually gains at the shapes of a transformer layer (tokens × d → 3d, d → d, d → 4d,
4d → d) bounds what any FP8 recipe can gain. ``torch._scaled_mm`` with per-tensor scales is
the kernel FP8 training recipes call; its output is BF16.

Run on a GPU machine from the repository root::

    python benchmarks/fp8_gemm.py --out $OUT/fp8_gemm.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cuda_timing import median_cuda_seconds, parse_args  # a sibling module

_TOKENS = 16384


def _pair(torch: Any, m: int, k: int, n: int, steps: int) -> dict[str, Any]:
    """BF16 and FP8 seconds and TFLOP/s for one (m × k) · (k × n) product."""
    dev = torch.device("cuda")
    x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    x8 = x.to(torch.float8_e4m3fn)
    w8 = w.to(torch.float8_e4m3fn)
    one = torch.ones((), device=dev, dtype=torch.float32)
    flops = 2 * m * k * n
    bf16_s = median_cuda_seconds(torch, lambda: x @ w.t(), warmup=5, steps=steps)
    fp8_s = median_cuda_seconds(
        torch,
        lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
        warmup=5,
        steps=steps,
    )
    return {
        "m": m,
        "k": k,
        "n": n,
        "bf16_seconds": bf16_s,
        "fp8_seconds": fp8_s,
        "bf16_tflops": flops / bf16_s / 1e12,
        "fp8_tflops": flops / fp8_s / 1e12,
        "fp8_speedup": bf16_s / fp8_s,
    }


def main(argv: list[str] | None = None) -> int:
    """Print one line per shape and write the JSON."""
    args = parse_args(__doc__, argv)
    import torch

    if not torch.cuda.is_available():
        print("fp8_gemm: needs a CUDA device")
        return 2
    rows = []
    for d in (2048, 4096, 8192, 16384):
        for k, n in ((d, 3 * d), (d, d), (d, 4 * d), (4 * d, d)):
            row = _pair(torch, _TOKENS, k, n, args.steps)
            row["d_model"] = d
            rows.append(row)
            print(
                f"d {d}: {_TOKENS}x{k}x{n} bf16 {row['bf16_tflops']:.0f} TFLOP/s, "
                f"fp8 {row['fp8_tflops']:.0f} TFLOP/s, x{row['fp8_speedup']:.2f}",
                flush=True,
            )
            torch.cuda.empty_cache()
    payload = {
        "device_name": torch.cuda.get_device_name(0),
        "torch_version": str(torch.__version__),
        "tokens": _TOKENS,
        "gemms": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
