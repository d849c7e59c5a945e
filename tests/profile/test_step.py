"""profile_step: FLOP counts match hand counts, timing is sane, MFU uses the catalog peak."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest

from trainbill.errors import PriceNotFoundError
from trainbill.profile import (
    ProfileError,
    builtin_config,
    make_transformer_step,
    peak_tflops_for,
    profile_step,
)

torch = pytest.importorskip("torch")


def _linear_stack_step(*, input_requires_grad: bool) -> Callable[[], None]:
    """Forward + backward through Linear(32→64) → ReLU → Linear(64→16) on an 8×32 batch."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 64, bias=False),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 16, bias=False),
    )
    x = torch.randn(8, 32, requires_grad=input_requires_grad)

    def step() -> None:
        model(x).sum().backward()

    return step


def test_linear_stack_flops_match_hand_count() -> None:
    """Two Linears on an 8-row batch: 2·m·n·k forward each, ×3 with backward.

    Forward: 2·8·32·64 = 32768 and 2·8·64·16 = 16384, total 49152.
    Backward computes grad-input and grad-weight, each as large as the forward matmul,
    so forward + backward = 3 × 49152 = 147456.
    """
    step = _linear_stack_step(input_requires_grad=True)
    result = profile_step(step, warmup=0, steps=1, tokens_per_step=8, profile_kernels=False)
    assert result.flops_per_step == 147_456


def test_first_layer_skips_grad_input_when_input_needs_no_grad() -> None:
    """The counter counts what runs: no grad-input matmul for a batch without grad.

    First layer: forward 32768 + grad-weight 32768 = 65536; second layer 3 × 16384 = 49152;
    total 114688.
    """
    step = _linear_stack_step(input_requires_grad=False)
    result = profile_step(step, warmup=0, steps=1, tokens_per_step=8, profile_kernels=False)
    assert result.flops_per_step == 114_688


def test_tiny_transformer_flops_match_hand_count() -> None:
    """The builtin's count is 6·(matmul params)·tokens plus attention, which CPU counts too.

    tiny-transformer: V=512, d=64, L=2, S=64, B=4, so T = 256 tokens.
    Matmul weights: per layer 12·d² = 49152, two layers 98304, plus head V·d = 32768,
    total 131072; 6 · 131072 · 256 = 201_326_592 (forward 2×, backward 4×).
    Attention per layer forward 4·B·S²·d = 4·4·4096·64 = 4_194_304 (QKᵀ and AV), backward
    2.5× that; two layers: 2 · 3.5 · 4_194_304 = 29_360_640.
    Total 201_326_592 + 29_360_640 = 230_686_720.
    """
    config = builtin_config("tiny-transformer")
    step = make_transformer_step(config, device="cpu", precision="fp32")
    result = profile_step(
        step, warmup=0, steps=1, tokens_per_step=config.tokens_per_step, profile_kernels=False
    )
    assert result.flops_per_step == 230_686_720


def test_recompute_reruns_each_layers_forward_and_mfu_leaves_it_out() -> None:
    """Full activation recompute gives the plain step's loss (fp32, same seed) and runs each
    layer's forward again in backward, except the last matmul, whose output backward does not
    need (PyTorch's non-reentrant checkpoint stops recomputing there). Those FLOPs are hardware
    work, not model work: MFU counts the plain step's 230_686_720
    (test_tiny_transformer_flops_match_hand_count) and the rerun is reported beside it.

    tiny-transformer (d=64, S=64, B=4, T=256): per layer the QKV, output and first MLP
    projections 2·T·d·(3d + d + 4d) = 16·256·4096 = 16_777_216, attention forward
    4·B·S²·d = 4_194_304; two layers: 2 · 20_971_520 = 41_943_040.
    """
    config = builtin_config("tiny-transformer")
    plain = make_transformer_step(config, device="cpu", precision="fp32")
    again = make_transformer_step(config, device="cpu", precision="fp32", recompute=True)
    assert float(again()) == pytest.approx(float(plain()), rel=1e-6)  # type: ignore[arg-type]
    result = profile_step(
        again, warmup=0, steps=1, tokens_per_step=config.tokens_per_step, profile_kernels=False
    )
    assert result.flops_per_step == 230_686_720
    assert result.recompute_flops_per_step == 41_943_040
    assert any("activation recompute: 41,943,040 FLOPs" in n for n in result.notes)
    without = profile_step(
        plain, warmup=0, steps=1, tokens_per_step=config.tokens_per_step, profile_kernels=False
    )
    assert without.recompute_flops_per_step == 0
    assert not any("activation recompute" in n for n in without.notes)


def test_tiny_transformer_param_count_by_hand() -> None:
    """(V+S)·d + L·(12·d² + 4·d) + 2·d + V·d with V=512, S=64, d=64, L=2.

    (512+64)·64 = 36864; 2·(49152 + 256) = 98816; final norm 128; head 32768;
    total 168576.
    """
    assert builtin_config("tiny-transformer").param_count == 168_576


def test_timing_is_positive_and_repeatable_in_magnitude() -> None:
    """Two profiles of the same step agree within 5× and report positive times."""
    config = builtin_config("tiny-transformer")
    step = make_transformer_step(config, device="cpu", precision="fp32")
    first = profile_step(step, warmup=1, steps=5, tokens_per_step=256, profile_kernels=False)
    second = profile_step(step, warmup=1, steps=5, tokens_per_step=256, profile_kernels=False)
    assert all(t > 0 for t in first.step_seconds_samples + second.step_seconds_samples)
    assert len(first.step_seconds_samples) == 5
    ratio = first.step_seconds / second.step_seconds
    assert 0.2 < ratio < 5
    assert first.achieved_tflops == pytest.approx(first.flops_per_step / first.step_seconds / 1e12)


def test_cpu_profile_has_no_mfu_and_says_why() -> None:
    """A CPU has no catalog peak: mfu is None and a note explains it; memory is RSS."""
    step = _linear_stack_step(input_requires_grad=True)
    result = profile_step(step, warmup=0, steps=2, tokens_per_step=8)
    assert result.device == "cpu"
    assert result.mfu is None
    assert result.accelerator is None
    assert any("mfu is null" in note for note in result.notes)
    assert result.peak_memory_source == "process_max_rss"
    assert result.peak_memory_bytes > 0
    assert result.comm_share is None
    assert result.top_kernels, "the profiler should report the step's operators"
    assert result.top_kernels[0].seconds_per_step > 0


@dataclass(frozen=True)
class _FakeAccelerator:
    peak_bf16_tflops: float
    peak_fp8_tflops: float | None


class _FakeCatalog:
    """An injected two-row catalog so MFU arithmetic is checked without datasheet figures."""

    rows: ClassVar[dict[str, _FakeAccelerator]] = {
        "fake-gpu": _FakeAccelerator(peak_bf16_tflops=0.5, peak_fp8_tflops=1.0)
    }

    def accelerator(self, accelerator_id: str, /) -> _FakeAccelerator:
        try:
            return self.rows[accelerator_id]
        except KeyError:
            raise PriceNotFoundError(f"unknown accelerator {accelerator_id!r}") from None


def test_mfu_divides_achieved_by_the_catalog_peak_for_the_precision() -> None:
    """With an accelerator forced, mfu = achieved / peak of the chosen precision column."""
    step = _linear_stack_step(input_requires_grad=True)
    bf16 = profile_step(
        step,
        warmup=0,
        steps=2,
        tokens_per_step=8,
        accelerator="fake-gpu",
        catalog=_FakeCatalog(),
        profile_kernels=False,
    )
    assert bf16.peak_tflops == 0.5
    assert bf16.mfu == pytest.approx(bf16.achieved_tflops / 0.5)
    fp8 = profile_step(
        step,
        warmup=0,
        steps=2,
        tokens_per_step=8,
        precision="fp8",
        accelerator="fake-gpu",
        catalog=_FakeCatalog(),
        profile_kernels=False,
    )
    assert fp8.peak_tflops == 1.0
    assert fp8.mfu == pytest.approx(fp8.achieved_tflops / 1.0)


def test_unknown_accelerator_gives_no_mfu_rather_than_an_error() -> None:
    """A device the catalog lacks still profiles; mfu is None and the note names the id."""
    step = _linear_stack_step(input_requires_grad=True)
    result = profile_step(
        step,
        warmup=0,
        steps=1,
        tokens_per_step=8,
        accelerator="nope",
        catalog=_FakeCatalog(),
        profile_kernels=False,
    )
    assert result.mfu is None
    assert any("'nope'" in note for note in result.notes)


def test_packaged_catalog_peaks_are_read_per_precision() -> None:
    """H200 peaks come from the packaged catalog; fp32/tf32 have no column, so no peak.

    NVIDIA H200 datasheet: 989 TFLOP/s dense BF16 (and FP16), 1979 dense FP8.
    """
    assert peak_tflops_for("h200", "bf16") == (989.0, None)
    assert peak_tflops_for("h200", "fp16") == (989.0, None)
    assert peak_tflops_for("h200", "fp8") == (1979.0, None)
    peak, reason = peak_tflops_for("h200", "fp32")
    assert peak is None
    assert reason is not None
    assert "fp32" in reason


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"steps": 0}, "steps: must be >= 1, got 0"),
        ({"warmup": -1}, "warmup: must be >= 0, got -1"),
        ({"tokens_per_step": 0}, "tokens_per_step: must be >= 1, got 0"),
        ({"precision": "int4"}, "precision: 'int4' is not one of fp32, tf32, fp16, bf16, fp8"),
        ({"device": "cuda:0"}, "asked for, but CUDA is not available"),
    ],
)
def test_bad_arguments_raise_profile_error(kwargs: dict[str, object], message: str) -> None:
    """Bad counts, precisions and devices are refused with the argument named."""
    if "device" in kwargs and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    args: dict[str, object] = {"warmup": 0, "steps": 1, "tokens_per_step": 8, **kwargs}
    with pytest.raises(ProfileError, match=message.replace("(", r"\(")):
        profile_step(lambda: None, **args)


@pytest.fixture
def single_process_group() -> Iterator[None]:
    """A one-rank Gloo process group in this process, torn down afterwards."""
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
    try:
        yield
    finally:
        dist.destroy_process_group()


@pytest.mark.usefixtures("single_process_group")
def test_distributed_step_reports_communication_share() -> None:
    """Under a process group the collectives' share of the step is measured (0 < share ≤ 1)."""
    import torch.distributed as dist

    tensor = torch.randn(1 << 18)
    weight = torch.randn(128, 128)

    def step() -> None:
        dist.all_reduce(tensor)
        torch.mm(weight, weight)

    result = profile_step(step, warmup=1, steps=2, tokens_per_step=1)
    assert result.world_size == 1
    assert result.comm_share is not None
    assert 0 < result.comm_share <= 1
