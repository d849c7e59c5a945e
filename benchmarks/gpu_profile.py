"""Profile the tiny builtin transformer and a ~1B-parameter transformer on this machine.

One short, prepared run for a GPU machine: it measures step time, FLOPs (``FlopCounterMode``),
achieved TFLOP/s and MFU against the catalog peak for the detected accelerator, peak memory
and the top kernels, and writes everything as JSON. On a machine without CUDA it profiles
the tiny model only (the 1B model would take minutes per step on a CPU), so the script can
be checked anywhere.

Run from the repository root::

    pip install -e .[profile]          # or use whatever torch the machine already has
    python benchmarks/gpu_profile.py --out $OUT/profile.json

The script needs only PyTorch and the standard library: if ``import trainbill`` fails for
lack of a core dependency (NumPy, Typer…), it loads ``trainbill.profile`` and
``trainbill.catalog`` straight from ``src/`` without the package's ``__init__``.

Models (bf16 autocast with fp32 master weights and fused AdamW on CUDA; fp32 on a CPU):

* ``tiny-transformer``: the CLI's builtin (V=512, d=64, 2 layers, seq 64, batch 4).
* ``transformer-1b``: V=32000, d=2048, 18 layers, 16 heads, seq 2048: 1,041,387,520
  parameters. The batch is sized from free GPU memory (at most 16 sequences) and halved on
  out-of-memory.

Besides the counted-FLOP MFU, each result reports ``mfu_6nt``: the common
``6 · params · tokens`` estimate over the same time and peak, which leaves attention out
and counts the embedding as if it were a matmul, for comparison with published MFU figures.
Exit status is 1 if any model failed (its error is in the JSON), else 0.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _import_profile() -> tuple[Any, str]:
    """Import ``trainbill.profile``, falling back to the source tree without ``__init__``."""
    try:
        from trainbill import profile

        return profile, "installed trainbill"
    except ImportError as exc:
        src = ROOT / "src" / "trainbill"
        if not src.is_dir():
            raise
        # A bare package object lets the stdlib-only submodules load without the
        # package __init__, which pulls in the forecast's dependencies.
        for name in [n for n in sys.modules if n == "trainbill" or n.startswith("trainbill.")]:
            del sys.modules[name]
        package = types.ModuleType("trainbill")
        package.__path__ = [str(src)]
        sys.modules["trainbill"] = package
        from trainbill import profile

        return profile, f"source tree without trainbill/__init__ ({exc})"


def _big_config(profile: Any, args: argparse.Namespace, batch: int) -> Any:
    """The ~1B configuration (or the overridden one) at a given batch size."""
    return profile.TransformerConfig(
        vocab_size=args.big_vocab,
        d_model=args.big_d_model,
        n_layers=args.big_layers,
        n_heads=args.big_heads,
        seq_len=args.big_seq,
        batch_size=batch,
    )


def _initial_batch(torch: Any, config: Any, device: str, cap: int) -> int:
    """Sequences that fit in ~80 % of free memory, by a rough per-sequence estimate.

    Static: 16 bytes per parameter (fp32 weights, grads, two AdamW moments) plus a bf16
    copy. Per sequence: saved activations under bf16 autocast, measured with
    ``saved_tensors_hooks`` on small configurations at 50-65 bytes per token per layer per
    d_model unit (56 used), plus fp32 logits, their bf16 copy and gradient (10 bytes per
    token per vocabulary entry). Out-of-memory halves the batch, so this need not be exact.
    """
    if not device.startswith("cuda"):
        return cap
    free, _total = torch.cuda.mem_get_info()
    static = 18 * config.param_count
    per_seq = config.seq_len * (56 * config.d_model * config.n_layers + 10 * config.vocab_size)
    fits = int((0.8 * free - static) // per_seq)
    batch = 1
    while batch * 2 <= min(fits, cap):
        batch *= 2
    return batch


def _run_model(
    profile: Any,
    *,
    name: str,
    config: Any,
    device: str,
    precision: str,
    warmup: int,
    steps: int,
    recompute: bool = False,
) -> dict[str, Any]:
    """Build the model, profile it, and return a JSON-ready result."""
    started = time.perf_counter()
    step = profile.make_transformer_step(
        config, device=device, precision=precision, recompute=recompute
    )
    result = profile.profile_step(
        step,
        warmup=warmup,
        steps=steps,
        tokens_per_step=config.tokens_per_step,
        device=device,
        precision=precision,
    )
    del step
    flops_6nt = 6 * config.param_count * config.tokens_per_step
    mfu_6nt = None
    if result.peak_tflops:
        mfu_6nt = flops_6nt / result.step_seconds / 1e12 / result.peak_tflops
    return {
        "model": name,
        "config": {
            "vocab_size": config.vocab_size,
            "d_model": config.d_model,
            "n_layers": config.n_layers,
            "n_heads": config.n_heads,
            "seq_len": config.seq_len,
            "batch_size": config.batch_size,
            "recompute": recompute,
        },
        "param_count": config.param_count,
        "flops_6nt_per_step": flops_6nt,
        "mfu_6nt": mfu_6nt,
        "wall_seconds": time.perf_counter() - started,
        "profile": result.to_dict(),
    }


def _release(torch: Any) -> None:
    """Free the previous model before building the next."""
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    """Profile the models, print a summary line per model, write JSON; 1 if any failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the JSON results here")
    parser.add_argument("--device", help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--skip-big", action="store_true", help="profile the tiny model only")
    parser.add_argument(
        "--force-big", action="store_true", help="run the big model on a CPU too (slow)"
    )
    parser.add_argument("--big-vocab", type=int, default=32000)
    parser.add_argument("--big-d-model", type=int, default=2048)
    parser.add_argument("--big-layers", type=int, default=18)
    parser.add_argument("--big-heads", type=int, default=16)
    parser.add_argument("--big-seq", type=int, default=2048)
    parser.add_argument("--big-batch", type=int, default=16, help="largest batch to try")
    args = parser.parse_args(argv)

    # Fewer fragmentation OOMs for the big model; must be set before CUDA initialises.
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    profile, imported_from = _import_profile()
    import torch

    device = str(profile.resolve_device(args.device))
    on_gpu = device.startswith("cuda")
    precision = "bf16" if on_gpu else "fp32"
    machine: dict[str, Any] = {
        "device": device,
        "device_name": (
            torch.cuda.get_device_name(device) if on_gpu else platform.machine() or "cpu"
        ),
        "accelerator": (
            profile.accelerator_id_for_device_name(torch.cuda.get_device_name(device))
            if on_gpu
            else None
        ),
        "torch_version": str(torch.__version__),
        "cuda_version": torch.version.cuda,
        "python": platform.python_version(),
        "cpu_threads": torch.get_num_threads(),
        "trainbill_from": imported_from,
    }
    print(f"# {machine['device_name']} ({device}), torch {machine['torch_version']}", flush=True)
    # torch.OutOfMemoryError is new in 2.5; older images only have the CUDA one.
    oom_error = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)
    results: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    common = {"device": device, "precision": precision, "warmup": args.warmup}

    try:
        tiny = profile.builtin_config("tiny-transformer")
        results.append(
            _run_model(profile, name="tiny-transformer", config=tiny, steps=args.steps, **common)
        )
    except Exception as exc:  # noqa: BLE001 (one shot on the GPU: record, go on)
        errors.append(
            {"model": "tiny-transformer", "error": repr(exc), "trace": traceback.format_exc()}
        )
    _release(torch)

    if args.skip_big or not (on_gpu or args.force_big):
        reason = "--skip-big" if args.skip_big else "no CUDA device (use --force-big to run it)"
        print(f"# transformer-1b skipped: {reason}", flush=True)
    else:
        probe = _big_config(profile, args, 1)
        batch = _initial_batch(torch, probe, device, args.big_batch)
        while True:
            try:
                config = _big_config(profile, args, batch)
                results.append(
                    _run_model(
                        profile,
                        name="transformer-1b",
                        config=config,
                        steps=args.steps,
                        **common,
                    )
                )
                break
            except oom_error as exc:
                _release(torch)
                if batch == 1:
                    errors.append({"model": "transformer-1b", "error": repr(exc), "trace": ""})
                    break
                print(f"# out of memory at batch {batch}; retrying at {batch // 2}", flush=True)
                batch //= 2
            except Exception as exc:  # noqa: BLE001 (one shot on the GPU: record, go on)
                errors.append(
                    {"model": "transformer-1b", "error": repr(exc), "trace": traceback.format_exc()}
                )
                break
        _release(torch)

    for item in results:
        p = item["profile"]
        mfu = "n/a" if p["mfu"] is None else f"{p['mfu']:.1%}"
        mfu_6nt = "n/a" if item["mfu_6nt"] is None else f"{item['mfu_6nt']:.1%}"
        print(
            f"{item['model']}: {item['param_count']:,} params, batch "
            f"{item['config']['batch_size']}x{item['config']['seq_len']}, "
            f"step {p['step_seconds'] * 1e3:.1f} ms, {p['achieved_tflops']:.2f} TFLOP/s, "
            f"MFU {mfu} (6NT: {mfu_6nt}), peak mem {p['peak_memory_bytes'] / 2**30:.1f} GiB",
            flush=True,
        )
    for error in errors:
        print(f"ERROR {error['model']}: {error['error']}", flush=True)

    payload = {"machine": machine, "results": results, "errors": errors}
    text = json.dumps(payload, indent=2)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
        print(f"# wrote {args.out}", flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
