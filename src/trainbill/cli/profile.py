"""``trainbill profile``: measure a real training step and optionally save a calibration.

Thin shell over :mod:`trainbill.profile`: it picks the step (a user script or a builtin
model), calls :func:`~trainbill.profile.profile_step`, prints a table or JSON, and writes
the calibration file. PyTorch is imported only when the command runs, never when the CLI
starts, so ``trainbill --help`` stays fast without the ``profile`` extra.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from trainbill._io import check_input_file, destination_problem
from trainbill.cli import app
from trainbill.profile import (
    BUILTINS,
    ProfileError,
    StepProfile,
    builtin_config,
    calibration_from_profile,
    check_counts,
    load_step_script,
    make_transformer_step,
    profile_step,
    resolve_device,
    write_calibration,
)

__all__ = ["profile_command"]


_ProfileScript = Annotated[
    Path | None,
    typer.Option(
        "--script",
        help="Python file defining make_step() -> (step_fn, tokens_per_step[, info]).",
    ),
]
_ProfileBuiltin = Annotated[
    str | None,
    typer.Option("--builtin", help=f"Profile a builtin model: {', '.join(BUILTINS)}."),
]
_ProfileSteps = Annotated[int, typer.Option("--steps", help="Timed steps (median reported).")]
_ProfileWarmup = Annotated[int, typer.Option("--warmup", help="Untimed steps first.")]
_ProfileDevice = Annotated[
    str | None,
    typer.Option("--device", help="Torch device, e.g. cuda:0 or cpu (default: cuda if any)."),
]
_ProfilePrecision = Annotated[
    str | None,
    typer.Option(
        "--precision",
        help="Compute precision for the MFU peak: fp32, tf32, fp16, bf16, fp8. Default: "
        "the script's info, else bf16 on a GPU and fp32 on a CPU.",
    ),
]
_ProfileAccelerator = Annotated[
    str | None,
    typer.Option("--accelerator", help="Catalog accelerator id, overriding detection."),
]
_ProfileAsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
_ProfileOutput = Annotated[
    Path | None,
    typer.Option("-o", "--output", help="Write a calibration TOML file here."),
]
_ProfileForce = Annotated[
    bool, typer.Option("--force", help="Replace an existing calibration file.")
]
_ProfileKernels = Annotated[
    bool,
    typer.Option("--kernels/--no-kernels", help="Run torch.profiler for top kernels."),
]


@app.command("profile")
def profile_command(
    script: _ProfileScript = None,
    builtin: _ProfileBuiltin = None,
    steps: _ProfileSteps = 5,
    warmup: _ProfileWarmup = 2,
    device: _ProfileDevice = None,
    precision: _ProfilePrecision = None,
    accelerator: _ProfileAccelerator = None,
    as_json: _ProfileAsJson = False,
    output: _ProfileOutput = None,
    force: _ProfileForce = False,
    kernels: _ProfileKernels = True,
) -> None:
    """Measure a real training step: step time, FLOPs, achieved TFLOP/s and MFU."""
    if (script is None) == (builtin is None):
        raise ProfileError("give exactly one of --script FILE.py or --builtin NAME")
    # Cheap checks first: a step script may spend minutes loading a model.
    check_counts(warmup=warmup, steps=steps)
    if output is not None:
        inputs = [script] if script is not None else []
        problem = destination_problem(output, replace=force, inputs=inputs)
        if problem is not None:
            raise ProfileError(f"--output: {problem}")
    config = builtin_config(builtin) if builtin is not None else None
    if script is not None:  # the input gate: a regular file (not a FIFO, a device, a loop)
        check_input_file(
            script,
            what="step script",
            error=lambda message, source: ProfileError(f"{source}: {message}"),
        )

    dev = str(resolve_device(device))
    default_precision = "bf16" if dev.startswith("cuda") else "fp32"
    model_params: int | None
    seq_len: int | None
    if config is not None:
        precision = precision or default_precision
        step_fn = make_transformer_step(config, device=dev, precision=precision)
        tokens, model_params, seq_len = config.tokens_per_step, config.param_count, config.seq_len
        source = f"builtin:{builtin}"
    else:
        assert script is not None  # narrowed by the exactly-one check above
        loaded = load_step_script(script)
        step_fn, tokens = loaded.step_fn, loaded.tokens_per_step
        model_params, seq_len = loaded.model_params, loaded.seq_len
        precision = precision or loaded.precision or default_precision
        source = str(script)

    result = profile_step(
        step_fn,
        warmup=warmup,
        steps=steps,
        tokens_per_step=tokens,
        device=dev,
        precision=precision,
        accelerator=accelerator,
        profile_kernels=kernels,
    )
    if output is not None:
        cal = calibration_from_profile(
            result,
            measured_at=datetime.now(UTC),
            source=source,
            model_params=model_params,
            seq_len=seq_len,
        )
        write_calibration(cal, output, overwrite=force)

    payload: dict[str, Any] = {
        **result.to_dict(),
        "source": source,
        "model_params": model_params,
        "seq_len": seq_len,
        "calibration": None if output is None else str(output),
    }
    if as_json:
        typer.echo(json.dumps(payload, indent=2))
    else:
        _print_table(result, payload)


def _print_table(result: StepProfile, payload: dict[str, Any]) -> None:
    """Human-readable summary: the headline numbers, then the top kernels."""
    console = Console()
    table = Table(title=f"Training step on {result.device_name} ({result.device})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    mfu = "n/a (no catalog peak)" if result.mfu is None else f"{result.mfu:.1%}"
    rows = [
        ("source", str(payload["source"])),
        ("accelerator", result.accelerator or "unknown"),
        ("precision", result.precision),
        (
            "step time",
            f"{result.step_seconds * 1e3:.2f} ms (median of {len(result.step_seconds_samples)})",
        ),
        ("FLOPs / step", f"{result.flops_per_step:.4g}"),
        ("achieved", f"{result.achieved_tflops:.4g} TFLOP/s"),
        (
            "peak (catalog)",
            "n/a" if result.peak_tflops is None else f"{result.peak_tflops:g} TFLOP/s",
        ),
        ("MFU", mfu),
        ("tokens / s", f"{result.tokens_per_second:,.0f}"),
        (
            "peak memory",
            f"{result.peak_memory_bytes / 2**30:.2f} GiB ({result.peak_memory_source})",
        ),
    ]
    if result.recompute_flops_per_step:
        # Hardware work beside the model FLOPs above (MFU leaves it out; the note says why).
        rows.insert(5, ("recomputed FLOPs / step", f"{result.recompute_flops_per_step:.4g}"))
    if result.comm_share is not None:
        rows.append(("communication", f"{result.comm_share:.1%} of step"))
    if payload["calibration"]:
        rows.append(("calibration", str(payload["calibration"])))
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)
    if result.top_kernels:
        kernels = Table(title="Top kernels" if result.device != "cpu" else "Top operators")
        kernels.add_column("name", overflow="fold")
        kernels.add_column("ms / step", justify="right")
        kernels.add_column("share", justify="right")
        for kernel in result.top_kernels:
            kernels.add_row(
                kernel.name, f"{kernel.seconds_per_step * 1e3:.3f}", f"{kernel.share:.1%}"
            )
        console.print(kernels)
    for note in result.notes:
        console.print(f"note: {note}")
