"""Sweep one-GPU training steps over batch, sequence length and width.

Why: ``gpu_profile.py`` measured three widths at one batch and one sequence length. The time
model makes three more claims a single GPU can test, and this one prepared run measures each:

* **batch**: step time = fixed cost + work ∝ tokens. The 1.04B model at 4, 8, 16 and 32
  sequences of 2048 tokens puts a line through the points: its intercept is what one GPU
  spends per step whatever the batch (optimizer, launches), to set beside the fitted
  ``step_overhead_s`` that the published multi-node runs need.
* **sequence length**: the model counts attention as 12 · L · d · seq FLOPs per token, run at
  the matmul efficiency. The same 1.04B model at seq 512, 2048 (from the batch sweep), 8192 and
  16384 with 32,768 tokens per step moves the attention share from 3 % to 54 %.
* **recompute**: full activation recompute (each layer's forward run again in backward), on
  the d 2048 model at seq 2048 and 8192 and the d 4096 model (with its plain step beside it):
  the time model charges 4/3 of the step for it (one extra forward of three passes).
* **width**: d 8192 (4 layers, 3.7B parameters) extends the d 1024–4096 widths already measured
  to the width of a 70B model.
Each configuration is profiled with ``trainbill.profile.profile_step`` exactly as
``gpu_profile.py`` does (median of ``--steps`` timed steps after ``--warmup``); out of memory
halves the batch and is recorded. Results are written after every configuration, so a run cut
short keeps what it measured. ``--smoke`` runs every configuration scaled down to a tiny model
(CPU-safe) to check the script anywhere.

Run from the repository root on the GPU machine::

    python benchmarks/gpu_sweep.py --out $OUT/sweep.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_profile  # a sibling script, not a package


@dataclass(frozen=True)
class Shape:
    """One configuration of the sweep (vocabulary 32,000, MLP ratio 4, as gpu_profile)."""

    name: str
    d_model: int
    n_layers: int
    n_heads: int
    seq_len: int
    batch: int
    recompute: bool = False


# 32,768 tokens per step unless the sweep is over the batch; heads keep a width of 128.
SHAPES: tuple[Shape, ...] = (
    Shape("batch-4", 2048, 18, 16, 2048, 4),
    Shape("batch-8", 2048, 18, 16, 2048, 8),
    Shape("batch-16", 2048, 18, 16, 2048, 16),
    Shape("batch-32", 2048, 18, 16, 2048, 32),
    Shape("seq-512", 2048, 18, 16, 512, 64),
    Shape("seq-8192", 2048, 18, 16, 8192, 4),
    Shape("seq-16384", 2048, 18, 16, 16384, 2),
    Shape("d8192-l4", 8192, 4, 64, 2048, 8),
    Shape("recompute-batch-16", 2048, 18, 16, 2048, 16, recompute=True),
    Shape("recompute-seq-8192", 2048, 18, 16, 8192, 4, recompute=True),
    Shape("recompute-d4096-l8", 4096, 8, 32, 2048, 16, recompute=True),
    Shape("d4096-l8", 4096, 8, 32, 2048, 16),
)
_VOCAB = 32000


def _config(profile: Any, shape: Shape, batch: int, *, smoke: bool) -> Any:
    """The TransformerConfig of a shape (tiny and proportionate under ``--smoke``)."""
    if smoke:
        return profile.TransformerConfig(
            vocab_size=512,
            d_model=max(64, shape.d_model // 32),
            n_layers=2,
            n_heads=4,
            seq_len=max(16, shape.seq_len // 64),
            batch_size=max(1, batch // 4),
        )
    return profile.TransformerConfig(
        vocab_size=_VOCAB,
        d_model=shape.d_model,
        n_layers=shape.n_layers,
        n_heads=shape.n_heads,
        seq_len=shape.seq_len,
        batch_size=batch,
    )


def _measure(
    profile: Any, torch: Any, shape: Shape, args: argparse.Namespace, device: str
) -> dict[str, Any]:
    """Profile one shape, halving the batch on out-of-memory; the result or the error."""
    oom_error = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)
    on_gpu = device.startswith("cuda")
    batch = shape.batch
    halved: list[int] = []
    while True:
        try:
            result = gpu_profile._run_model(
                profile,
                name=shape.name,
                config=_config(profile, shape, batch, smoke=args.smoke),
                device=device,
                precision="bf16" if on_gpu else "fp32",
                warmup=args.warmup,
                steps=args.steps,
                recompute=shape.recompute,
            )
            result["halved_from"] = halved
            return result
        except oom_error as exc:
            gpu_profile._release(torch)
            halved.append(batch)
            if batch == 1:
                return {"model": shape.name, "error": repr(exc), "halved_from": halved}
            print(f"# {shape.name}: out of memory at batch {batch}", flush=True)
            batch //= 2
        except Exception as exc:  # noqa: BLE001 (one shot on the GPU: record, go on)
            return {"model": shape.name, "error": repr(exc), "trace": traceback.format_exc()}
        finally:
            gpu_profile._release(torch)


def main(argv: list[str] | None = None) -> int:
    """Run the sweep, print a line per shape, write the JSON after each; 1 if any failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="write the JSON results here")
    parser.add_argument("--device", help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--only", help="comma-separated shape names (default: all)")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes: check the script")
    args = parser.parse_args(argv)

    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    profile, imported_from = gpu_profile._import_profile()
    import torch

    device = str(profile.resolve_device(args.device))
    if not device.startswith("cuda") and not args.smoke:
        print("gpu_sweep: no CUDA device; use --smoke to check the script on a CPU")
        return 2
    wanted = None if args.only is None else set(args.only.split(","))
    unknown = (wanted or set()) - {s.name for s in SHAPES}
    if unknown:
        allowed = ", ".join(s.name for s in SHAPES)
        print(f"gpu_sweep: --only: unknown {', '.join(sorted(unknown))}; allowed: {allowed}")
        return 2
    machine = {
        "device": device,
        "device_name": (torch.cuda.get_device_name(device) if device.startswith("cuda") else "cpu"),
        "torch_version": str(torch.__version__),
        "cuda_version": torch.version.cuda,
        "trainbill_from": imported_from,
        "smoke": args.smoke,
    }
    print(f"# {machine['device_name']}, torch {machine['torch_version']}", flush=True)
    results: list[dict[str, Any]] = []
    failed = False
    started = time.perf_counter()
    for shape in SHAPES:
        if wanted is not None and shape.name not in wanted:
            continue
        item = _measure(profile, torch, shape, args, device)
        item["shape"] = shape.__dict__
        results.append(item)
        if "error" in item:
            failed = True
            print(f"ERROR {shape.name}: {item['error']}", flush=True)
        else:
            p = item["profile"]
            cfg = item["config"]
            print(
                f"{shape.name}: {item['param_count']:,} params, batch "
                f"{cfg['batch_size']}x{cfg['seq_len']}, step {p['step_seconds'] * 1e3:.1f} ms, "
                f"{p['achieved_tflops']:.1f} TFLOP/s, MFU "
                f"{'n/a' if p['mfu'] is None else format(p['mfu'], '.1%')}, "
                f"peak mem {p['peak_memory_bytes'] / 2**30:.1f} GiB, "
                f"{item['wall_seconds']:.0f} s",
                flush=True,
            )
        payload = {
            "machine": machine,
            "elapsed_seconds": time.perf_counter() - started,
            "results": results,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        tmp.replace(args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
