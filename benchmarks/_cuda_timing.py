"""The timing loop the one-GPU kernel benchmarks share (``attention_causal.py``, ``fp8_gemm.py``).

Kernels launch asynchronously, so each call is bracketed by a device synchronise and the median
of the calls is reported: one slow call (a clock change, another process) moves it least.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any


def median_cuda_seconds(torch: Any, fn: Any, *, warmup: int, steps: int) -> float:
    """Median seconds of ``fn()`` after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def parse_args(doc: str, argv: list[str] | None) -> argparse.Namespace:
    """``--out`` (required) and ``--steps`` (timed calls, default 20), described by ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=20)
    return parser.parse_args(argv)
