"""Measure one real training step: time, FLOPs, achieved TFLOP/s, MFU, memory, kernels.

A forecast built on an assumed MFU is a guess; one measured step of the user's own model on
the user's own accelerator is evidence. :func:`profile_step` runs the step the way training
would (after warm-up, with the device synchronised around each step so the clock sees the
GPU's work, not just the kernel launches), counts the FLOPs the step actually executes with
``torch.utils.flop_counter.FlopCounterMode`` in one separate, untimed step (the counter
dispatches every op through Python and would distort the timing), and divides by the
catalog's peak for the detected accelerator. Peaks come from the catalog only, never code.
"""

from __future__ import annotations

import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol, cast

from trainbill._record import record
from trainbill.errors import TrainbillError
from trainbill.profile._errors import ProfileError
from trainbill.profile._torch import ensure_torch
from trainbill.profile.devices import accelerator_id_for_device_name

if TYPE_CHECKING:
    import torch

__all__ = [
    "AcceleratorCatalog",
    "AcceleratorPeaks",
    "KernelTime",
    "StepProfile",
    "check_counts",
    "peak_tflops_for",
    "profile_step",
    "resolve_device",
]

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")


class AcceleratorPeaks(Protocol):
    """What the profiler reads from a catalog accelerator row (``peak_<precision>_tflops``)."""

    @property
    def peak_bf16_tflops(self) -> float | None:
        """Dense BF16 tensor peak, TFLOP/s."""


class AcceleratorCatalog(Protocol):
    """The one catalog method the profiler needs; tests inject a small mapping-backed one."""

    def accelerator(self, accelerator_id: str, /) -> AcceleratorPeaks:
        """Return the accelerator row for ``accelerator_id`` or raise a ``TrainbillError``."""


@record
class KernelTime:
    """Time spent in one kernel (GPU) or operator (CPU) during the profiled steps.

    Attributes:
        name: kernel or operator name as the profiler reports it.
        calls_per_step: launches per step.
        seconds_per_step: self time per step (device time on a GPU, CPU time on a CPU).
        share: ``seconds_per_step`` as a fraction of the profiled wall-clock step time.
    """

    name: str
    calls_per_step: float
    seconds_per_step: float
    share: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "calls_per_step": self.calls_per_step,
            "seconds_per_step": self.seconds_per_step,
            "share": self.share,
        }


@record
class StepProfile:
    """What one profiled training step measured.

    Attributes:
        device: the torch device string (``"cuda:0"``, ``"cpu"``).
        device_name: what the device calls itself (``"NVIDIA H200"``).
        accelerator: catalog accelerator id, ``None`` for a CPU or an unknown device.
        precision: the precision the step computes in; selects the catalog peak.
        flops_per_step: model FLOPs of one step counted by ``FlopCounterMode`` (this process
            only), without the forward work activation recompute runs again in backward.
        recompute_flops_per_step: that recomputed forward work (hardware FLOPs the step also
            runs, in neither MFU nor ``achieved_tflops``); 0 without activation recompute.
        step_seconds: median wall-clock seconds of the timed steps.
        step_seconds_samples: every timed step, in order, so spread is visible.
        achieved_tflops: ``flops_per_step / step_seconds / 1e12``, per process (per GPU).
        tokens_per_step: tokens this process handles per step (as the caller declared).
        peak_tflops: catalog dense peak for ``accelerator`` at ``precision``, if known.
        mfu: ``achieved_tflops / peak_tflops``; ``None`` without a catalog peak.
        peak_memory_bytes: CUDA peak allocated bytes over the timed steps, or the process's
            peak resident set size on a CPU (see ``peak_memory_source``).
        peak_memory_source: ``"cuda_max_memory_allocated"`` or ``"process_max_rss"``.
        world_size: ``torch.distributed`` world size (1 when not distributed).
        comm_share: fraction of profiled step time spent in collectives (NCCL kernels on a
            GPU, Gloo work on a CPU); ``None`` when not distributed or not profiled. It is
            time the collectives *run*, overlapped with compute or not, so it bounds the
            exposed communication from above (capped at 1).
        top_kernels: the kernels (GPU) or operators (CPU) with the most self time.
        torch_version: ``torch.__version__``.
        notes: caveats a reader of the numbers needs (why MFU is missing, etc.).
    """

    device: str
    device_name: str
    accelerator: str | None
    precision: str
    flops_per_step: int
    step_seconds: float
    step_seconds_samples: tuple[float, ...]
    achieved_tflops: float
    tokens_per_step: int
    peak_tflops: float | None
    mfu: float | None
    peak_memory_bytes: int
    peak_memory_source: str
    world_size: int = 1
    recompute_flops_per_step: int = 0
    comm_share: float | None = None
    top_kernels: tuple[KernelTime, ...] = ()
    torch_version: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def tokens_per_second(self) -> float:
        """Throughput of this process: tokens per step over the median step time."""
        return self.tokens_per_step / self.step_seconds

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; the keys are the ``trainbill profile --json`` contract."""
        return {
            "device": self.device,
            "device_name": self.device_name,
            "accelerator": self.accelerator,
            "precision": self.precision,
            "flops_per_step": self.flops_per_step,
            "recompute_flops_per_step": self.recompute_flops_per_step,
            "step_seconds": self.step_seconds,
            "step_seconds_samples": list(self.step_seconds_samples),
            "achieved_tflops": self.achieved_tflops,
            "tokens_per_step": self.tokens_per_step,
            "tokens_per_second": self.tokens_per_second,
            "peak_tflops": self.peak_tflops,
            "mfu": self.mfu,
            "peak_memory_bytes": self.peak_memory_bytes,
            "peak_memory_source": self.peak_memory_source,
            "world_size": self.world_size,
            "comm_share": self.comm_share,
            "top_kernels": [k.to_dict() for k in self.top_kernels],
            "torch_version": self.torch_version,
            "notes": list(self.notes),
        }


def peak_tflops_for(
    accelerator: str | None,
    precision: str,
    catalog: AcceleratorCatalog | None = None,
) -> tuple[float | None, str | None]:
    """Look up the catalog dense peak for an accelerator at a precision.

    Args:
        accelerator: catalog id, or ``None`` (CPU or unknown device).
        precision: one of ``fp32``, ``tf32``, ``fp16``, ``bf16``, ``fp8``; read from the
            row's ``peak_<precision>_tflops`` field (fp16 from ``peak_bf16_tflops``), so a
            column the catalog does not carry (fp32, tf32) gives ``None`` rather than a
            guessed conversion.
        catalog: anything with ``accelerator(id)``; the packaged catalog when ``None``.

    Returns:
        ``(peak, None)`` when known, else ``(None, reason)`` with a one-line reason.
    """
    if accelerator is None:
        return None, "mfu is null: the device has no catalog accelerator (CPU or unknown)"
    if catalog is None:
        from trainbill.catalog import load_catalog

        catalog = load_catalog()
    try:
        row = catalog.accelerator(accelerator)
    except (TrainbillError, LookupError) as exc:
        return None, f"mfu is null: catalog has no accelerator {accelerator!r} ({exc})"
    # Tensor cores run FP16 and BF16 at the same dense rate on every part the catalog
    # lists (V100's bf16 column is its FP16 figure), so fp16 reads the bf16 column.
    column = "bf16" if precision == "fp16" else precision
    peak = getattr(row, f"peak_{column}_tflops", None)
    if peak is None or not isinstance(peak, int | float) or peak <= 0:
        return None, f"mfu is null: catalog lists no {precision} peak for {accelerator!r}"
    return float(peak), None


def profile_step(
    step_fn: Callable[[], object],
    *,
    warmup: int,
    steps: int,
    tokens_per_step: int,
    device: str | torch.device | None = None,
    precision: str = "bf16",
    accelerator: str | None = None,
    catalog: AcceleratorCatalog | None = None,
    profile_kernels: bool = True,
    profiled_steps: int = 2,
    top_k: int = 10,
) -> StepProfile:
    """Time a training step, count its FLOPs and report achieved TFLOP/s and MFU.

    Order of work: ``warmup`` untimed steps (allocator, cuDNN/cuBLAS autotuning, optimizer
    state), one untimed step under ``FlopCounterMode``, ``steps`` timed steps with the
    device synchronised before and after each, then (if ``profile_kernels``)
    ``profiled_steps`` steps under ``torch.profiler`` for top kernels and communication
    share. Every call of ``step_fn`` is a real optimizer step, so the model trains
    ``warmup + 1 + steps (+ profiled_steps)`` steps in total.

    Args:
        step_fn: runs one full training step (forward, backward, optimizer) when called.
        warmup: untimed steps first (``>= 0``).
        steps: timed steps (``>= 1``); the median is reported.
        tokens_per_step: tokens this process handles per step (``>= 1``).
        device: where the step runs; CUDA when available, else CPU, when ``None``.
        precision: compute precision, selects the catalog peak (one of ``PRECISIONS``).
        accelerator: catalog id to use instead of the one detected from the device name.
        catalog: catalog to read peaks from; the packaged one when ``None``.
        profile_kernels: also run ``torch.profiler`` for top kernels and comm share.
        profiled_steps: steps run under the profiler (``>= 1``).
        top_k: how many kernels to report.

    Returns:
        The measured :class:`StepProfile`. MFU counts the FLOPs the step executes as
        ``FlopCounterMode`` sees them (matmuls, convolutions, attention; causal attention
        is counted in full), so it is comparable with MFU figures quoted the same way.

    Raises:
        ProfileError: bad arguments or PyTorch not installed.
    """
    _check_arguments(warmup, steps, tokens_per_step, profiled_steps, precision)
    ensure_torch()
    import torch

    dev = resolve_device(device)
    sync = _synchronizer(dev)
    notes: list[str] = []

    for _ in range(warmup):
        step_fn()
    sync()

    flops, recomputed = _count_flops(step_fn, sync, notes)

    step_seconds, samples = _timed_steps(step_fn, dev, sync, steps)
    peak_memory, memory_source = _peak_memory(dev, notes)

    world_size = _distributed_world_size()
    top_kernels: tuple[KernelTime, ...] = ()
    comm_share: float | None = None
    if profile_kernels:
        top_kernels, comm_share = _profile_kernels(
            step_fn,
            dev,
            sync,
            steps=profiled_steps,
            top_k=top_k,
            distributed=world_size is not None,
        )

    device_name = _device_name(dev)
    accelerator, peak = _catalog_peak(dev, device_name, accelerator, precision, catalog, notes)
    achieved = flops / step_seconds / 1e12
    return StepProfile(
        device=str(dev),
        device_name=device_name,
        accelerator=accelerator,
        precision=precision,
        flops_per_step=flops,
        recompute_flops_per_step=recomputed,
        step_seconds=step_seconds,
        step_seconds_samples=tuple(samples),
        achieved_tflops=achieved,
        tokens_per_step=tokens_per_step,
        peak_tflops=peak,
        mfu=None if peak is None else achieved / peak,
        peak_memory_bytes=peak_memory,
        peak_memory_source=memory_source,
        world_size=world_size or 1,
        comm_share=comm_share,
        top_kernels=top_kernels,
        torch_version=str(torch.__version__),
        notes=tuple(notes),
    )


def _check_arguments(
    warmup: int, steps: int, tokens_per_step: int, profiled_steps: int, precision: str
) -> None:
    """Refuse bad counts or an unknown precision before any step runs (``ProfileError``)."""
    check_counts(warmup=warmup, steps=steps, tokens_per_step=tokens_per_step)
    if profiled_steps < 1:
        raise ProfileError(f"profiled_steps: must be >= 1, got {profiled_steps}")
    if precision not in PRECISIONS:
        allowed = ", ".join(PRECISIONS)
        raise ProfileError(f"precision: {precision!r} is not one of {allowed}")


def _catalog_peak(
    dev: torch.device,
    device_name: str,
    accelerator: str | None,
    precision: str,
    catalog: AcceleratorCatalog | None,
    notes: list[str],
) -> tuple[str | None, float | None]:
    """The catalog accelerator (the one given, else the GPU's name looked up) and its peak
    TFLOP/s at ``precision``; why there is none goes to ``notes``."""
    if accelerator is None:
        accelerator = accelerator_id_for_device_name(device_name) if dev.type == "cuda" else None
    peak, reason = peak_tflops_for(accelerator, precision, catalog)
    if reason:
        notes.append(reason)
    return accelerator, peak


def _timed_steps(
    step_fn: Callable[[], object], dev: torch.device, sync: Callable[[], None], steps: int
) -> tuple[float, list[float]]:
    """The median seconds of ``steps`` timed steps, the device synchronised before and after
    each (CUDA's peak-memory counter reset first, so the peak is the timed steps'), and the
    samples."""
    import torch

    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    samples: list[float] = []
    for _ in range(steps):
        sync()
        start = time.perf_counter()
        step_fn()
        sync()
        samples.append(time.perf_counter() - start)
    step_seconds = statistics.median(samples)
    if step_seconds <= 0:
        raise ProfileError("the step took no measurable time; profile a longer step")
    return step_seconds, samples


def _peak_memory(dev: torch.device, notes: list[str]) -> tuple[int, str]:
    """Peak memory in bytes and where it was read: CUDA's allocator on a GPU, else the whole
    process's peak resident set (said in ``notes``, as it counts more than the step)."""
    import torch

    if dev.type == "cuda":
        return int(torch.cuda.max_memory_allocated(dev)), "cuda_max_memory_allocated"
    notes.append("peak memory is the whole process's peak resident set size (CPU)")
    return _process_max_rss_bytes(), "process_max_rss"


def _recompute_flops_mode() -> Any:
    """The dispatch mode that counts recomputed forward FLOPs (a class built once torch is
    imported, so this module loads without torch)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class RecomputeFlops(TorchDispatchMode):  # type: ignore[no-untyped-call]
        """FLOPs of the forward work activation recompute runs again during backward.

        Inside the autograd engine (a graph task running) the gradient formulas run with grad
        mode off, while a checkpointed segment's forward is re-run with grad mode on, to build
        the graph its backward then walks (reentrant or not). Entered inside a
        ``FlopCounterMode``, each such op's FLOPs are what that counter adds for it. A step
        that differentiates twice (``create_graph=True``) would be counted here too.
        """

        def __init__(self, counter: Any) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self.counter = counter
            self.flops = 0

        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            import torch

            again = torch._C._current_graph_task_id() != -1 and torch.is_grad_enabled()
            before = self.counter.get_total_flops() if again else 0
            out = func(*args, **(kwargs or {}))
            if again:
                self.flops += int(self.counter.get_total_flops() - before)
            return out

    return RecomputeFlops


def _count_flops(step_fn: Callable[[], object], sync: Callable[[], None], notes: list[str]
                 ) -> tuple[int, int]:  # fmt: skip
    """One untimed step under ``FlopCounterMode``: (model FLOPs, recomputed forward FLOPs),
    with a note for each a reader must know."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False, custom_mapping=_extra_flop_formulas())
    recomputed = _recompute_flops_mode()(counter)
    with counter, recomputed:
        step_fn()
    sync()
    counted = int(counter.get_total_flops())
    if counted == 0:
        notes.append("FlopCounterMode counted no FLOPs: the step runs no matmul/conv/attention")
    flops = counted - recomputed.flops
    if recomputed.flops:
        notes.append(
            f"activation recompute: {recomputed.flops:,} FLOPs of forward work run again in "
            f"backward are left out of MFU (model FLOPs {flops:,}; all counted {counted:,})"
        )
    return flops, int(recomputed.flops)


def _extra_flop_formulas() -> dict[Any, Any]:
    """FLOP formulas ``FlopCounterMode`` lacks, so CPU and GPU count the same work.

    PyTorch registers the CUDA attention kernels (flash, memory-efficient, cuDNN) but not
    the CPU flash kernel that ``scaled_dot_product_attention`` uses on a CPU, which would
    leave attention out of CPU counts. The CPU kernel does the same matmuls, so it reuses
    PyTorch's own SDPA formulas (forward ``4·b·h·s_q·s_k·d``, backward 2.5× that).
    """
    import torch
    from torch.utils import flop_counter

    # getattr: older PyTorch (a GPU image may not have the pinned one) lacks some of these.
    sdpa_forward = getattr(flop_counter, "sdpa_flop_count", None)
    sdpa_backward = getattr(flop_counter, "sdpa_backward_flop_count", None)
    aten = torch.ops.aten
    forward_op = getattr(aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    backward_op = getattr(aten, "_scaled_dot_product_flash_attention_for_cpu_backward", None)
    if None in (sdpa_forward, sdpa_backward, forward_op, backward_op):
        return {}
    if forward_op in flop_counter.flop_registry:
        return {}
    # PyTorch leaves these helpers unannotated; the casts give them the types they have.
    count_forward = cast("Callable[..., int]", sdpa_forward)
    count_backward = cast("Callable[..., int]", sdpa_backward)

    def forward(
        query_shape: Any, key_shape: Any, value_shape: Any, *_args: Any, **_kwargs: Any
    ) -> int:
        return count_forward(query_shape, key_shape, value_shape)

    def backward(
        grad_out_shape: Any,
        query_shape: Any,
        key_shape: Any,
        value_shape: Any,
        *_args: Any,
        **_kwargs: Any,
    ) -> int:
        return count_backward(grad_out_shape, query_shape, key_shape, value_shape)

    return {forward_op: forward, backward_op: backward}


#: Most timed (or warm-up) steps one profile runs: a typo like ``--steps 1000000000`` would
#: otherwise run until killed, and a median of step times settles within tens of steps.
MAX_STEPS = 10_000


def check_counts(*, warmup: int, steps: int, tokens_per_step: int = 1) -> None:
    """Refuse counts that would make the measurement meaningless, naming the argument.

    Public so the CLI can refuse bad counts before it loads a (possibly large) model.
    """
    if steps < 1:
        raise ProfileError(f"steps: must be >= 1, got {steps}")
    if steps > MAX_STEPS:
        raise ProfileError(
            f"steps: must be <= {MAX_STEPS:,} (a median settles within tens of steps), got "
            f"{steps:,}"
        )
    if warmup < 0:
        raise ProfileError(f"warmup: must be >= 0, got {warmup}")
    if warmup > MAX_STEPS:
        raise ProfileError(f"warmup: must be <= {MAX_STEPS:,}, got {warmup:,}")
    if tokens_per_step < 1:
        raise ProfileError(f"tokens_per_step: must be >= 1, got {tokens_per_step}")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """The device to profile on: CUDA when available and none was asked for.

    Raises:
        ProfileError: not a device name, CUDA asked for but absent, or no PyTorch.
    """
    ensure_torch()
    import torch

    if device is None:
        if torch.cuda.is_available():
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError) as exc:
        raise ProfileError(f"device: {device!r} is not a torch device ({exc})") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ProfileError(f"device: {device!r} asked for, but CUDA is not available")
        if str(dev) == "cuda":  # no index given: the current device, named explicitly
            dev = torch.device("cuda", torch.cuda.current_device())
    return dev


def _synchronizer(dev: torch.device) -> Callable[[], None]:
    """Return a function that waits for all queued work on ``dev`` (no-op on a CPU)."""
    import torch

    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    if dev.type == "mps":
        return lambda: torch.mps.synchronize()  # noqa: PLW0108 (typed the same without torch)
    return lambda: None


def _device_name(dev: torch.device) -> str:
    """The name the device reports; the processor name on a CPU."""
    import torch

    if dev.type == "cuda":
        return str(torch.cuda.get_device_name(dev))
    if dev.type == "cpu":
        return platform.processor() or platform.machine() or "cpu"
    return str(dev.type)


def _process_max_rss_bytes() -> int:
    """Peak resident set size of this process; Linux reports KiB, macOS bytes."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def _distributed_world_size() -> int | None:
    """``torch.distributed`` world size, or ``None`` when no process group is initialised."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return int(dist.get_world_size())
    return None


def _is_comm(name: str, *, on_gpu: bool) -> bool:
    """Whether a profiler event is collective communication.

    On a GPU these are the NCCL kernels (``ncclDevKernel_AllReduce…``). On a CPU the Gloo
    backend's work appears as ``gloo:<collective>`` events on its worker thread.
    """
    lowered = name.lower()
    return "nccl" in lowered if on_gpu else lowered.startswith("gloo:")


def _profile_kernels(
    step_fn: Callable[[], object],
    dev: torch.device,
    sync: Callable[[], None],
    *,
    steps: int,
    top_k: int,
    distributed: bool,
) -> tuple[tuple[KernelTime, ...], float | None]:
    """Run ``steps`` steps under ``torch.profiler``; return top kernels and comm share.

    Shares are of the wall-clock time of the profiled steps (profiler overhead included,
    in numerator and denominator alike), so they read as "fraction of a step".
    """
    from torch.profiler import ProfilerActivity, profile

    on_gpu = dev.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    sync()
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        for _ in range(steps):
            step_fn()
        sync()
        wall = time.perf_counter() - start
    events = list(prof.key_averages())
    rows: list[tuple[str, int, float]] = []
    comm_seconds = 0.0
    for event in events:
        name = str(event.key)
        if on_gpu:
            if not _is_device_event(event):
                continue
            # ``self_cuda_time_total`` is the pre-2.4 name of the same figure.
            device_us: Any = getattr(event, "self_device_time_total", None)
            if device_us is None:
                device_us = getattr(event, "self_cuda_time_total", 0)
            seconds = float(device_us) / 1e6
            comm_measure = seconds
        else:
            seconds = float(event.self_cpu_time_total) / 1e6
            # Gloo runs collectives on its own thread, where they have no self time.
            comm_measure = float(event.cpu_time_total) / 1e6
        if _is_comm(name, on_gpu=on_gpu):
            comm_seconds += comm_measure
        if seconds > 0:
            rows.append((name, int(event.count), seconds))
    rows.sort(key=lambda row: row[2], reverse=True)
    kernels = tuple(
        KernelTime(
            name=name,
            calls_per_step=count / steps,
            seconds_per_step=seconds / steps,
            share=seconds / wall if wall > 0 else 0.0,
        )
        for name, count, seconds in rows[:top_k]
    )
    comm_share = min(1.0, comm_seconds / wall) if distributed and wall > 0 else None
    return kernels, comm_share


def _is_device_event(event: object) -> bool:
    """Whether a ``key_averages`` row is a GPU kernel/memcpy rather than a CPU-side op."""
    device_type = getattr(event, "device_type", None)
    name = getattr(device_type, "name", "")
    return name in {"CUDA", "PrivateUse1", "HIP"}
