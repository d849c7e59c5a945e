"""Built-in decoder-only transformers to profile when the user has no step script at hand.

The configuration and its parameter count are plain Python (no torch) so the CLI can list
builtins and a calibration can record the model size without importing torch. The model
itself lives in :mod:`trainbill.profile._transformer` and is imported only when built.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING

from trainbill._record import record
from trainbill.errors import suggest
from trainbill.profile._errors import ProfileError
from trainbill.profile._torch import ensure_torch

if TYPE_CHECKING:
    import torch

__all__ = ["BUILTINS", "TransformerConfig", "builtin_config", "make_transformer_step"]


@record
class TransformerConfig:
    """Shape of a GPT-style decoder (pre-LayerNorm, learned positions, untied head).

    Linear layers have no bias; LayerNorms have weight and bias. The MLP is
    ``d_model → mlp_ratio·d_model → d_model`` with GELU.
    """

    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    seq_len: int
    batch_size: int
    mlp_ratio: int = 4

    @property
    def tokens_per_step(self) -> int:
        """Tokens in one batch: ``batch_size · seq_len``."""
        return self.batch_size * self.seq_len

    @property
    def param_count(self) -> int:
        """Trainable parameters, counted from the architecture above.

        Token and position embeddings ``(V + S)·d``; per layer attention ``4d²`` (QKV and
        output projection), MLP ``2·r·d²`` and two LayerNorms ``4d``; final LayerNorm
        ``2d``; untied output head ``V·d``.
        """
        d = self.d_model
        per_layer = 4 * d * d + 2 * self.mlp_ratio * d * d + 4 * d
        return (
            (self.vocab_size + self.seq_len) * d
            + self.n_layers * per_layer
            + 2 * d
            + self.vocab_size * d
        )


BUILTINS: MappingProxyType[str, TransformerConfig] = MappingProxyType(
    {
        # Small enough to run a few steps on a laptop CPU in well under a second each.
        "tiny-transformer": TransformerConfig(
            vocab_size=512, d_model=64, n_layers=2, n_heads=4, seq_len=64, batch_size=4
        ),
    }
)


def builtin_config(name: str) -> TransformerConfig:
    """Return a builtin model's configuration, or a :class:`ProfileError` listing choices."""
    try:
        return BUILTINS[name]
    except KeyError:
        allowed = ", ".join(sorted(BUILTINS))
        msg = f"builtin: unknown model {name!r}; choose one of {allowed}.{suggest(name, BUILTINS)}"
        raise ProfileError(msg) from None


def make_transformer_step(
    config: TransformerConfig,
    *,
    device: str | torch.device = "cpu",
    precision: str = "fp32",
    seed: int = 0,
    recompute: bool = False,
) -> Callable[[], object]:
    """Build a model, an AdamW optimizer and one fixed random batch; return a step function.

    The batch is generated once and reused so the step measures compute, not data loading.
    ``precision="bf16"`` runs the step under ``torch.autocast`` with fp32 master weights,
    the usual mixed-precision recipe; ``"fp32"`` runs plain fp32.

    Args:
        config: model shape and batch.
        device: where to allocate the model and run the step.
        precision: ``"fp32"`` or ``"bf16"``.
        seed: seeds parameter initialisation and the batch, for repeatable runs.
        recompute: full activation recompute, layer by layer (what a team turns on when
            activations do not fit): the step runs each layer's forward twice, which is what
            the time model's recompute factor charges for.

    Returns:
        A function that runs forward, backward and an optimizer step, returning the loss
        tensor (not a float, which would force a device sync inside the step).

    Raises:
        ProfileError: unsupported precision, or PyTorch not installed.
    """
    if precision not in {"fp32", "bf16"}:
        msg = f"precision: builtin models run in fp32 or bf16, not {precision!r}"
        raise ProfileError(msg)
    ensure_torch()
    from trainbill.profile._transformer import build_step

    return build_step(config, device=device, precision=precision, seed=seed, recompute=recompute)
