"""The builtin transformer in plain functional PyTorch (imported only when torch is wanted).

Written over a flat list of parameter tensors rather than an ``nn.Module`` subclass so the
module type-checks the same with and without torch installed, and so every FLOP is visible
in a dozen lines: embeddings, ``n_layers`` × (LayerNorm, causal SDPA attention, LayerNorm,
GELU MLP), final LayerNorm, output head, cross-entropy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from trainbill.profile.models import TransformerConfig

__all__ = ["build_step"]

_DTYPES = {"bf16": torch.bfloat16}


def build_step(
    config: TransformerConfig,
    *,
    device: str | torch.device,
    precision: str,
    seed: int,
    recompute: bool = False,
) -> Callable[[], object]:
    """Allocate parameters, optimizer and batch on ``device``; return the step closure."""
    dev = torch.device(device)
    gen = torch.Generator(device=dev).manual_seed(seed)
    d, v, s = config.d_model, config.vocab_size, config.seq_len
    hidden = config.mlp_ratio * d

    def weight(*shape: int) -> torch.Tensor:
        # GPT-2 style N(0, 0.02) initialisation.
        w = torch.randn(*shape, generator=gen, device=dev) * 0.02
        return w.requires_grad_()

    def norm() -> tuple[torch.Tensor, torch.Tensor]:
        return (
            torch.ones(d, device=dev, requires_grad=True),
            torch.zeros(d, device=dev, requires_grad=True),
        )

    token_emb, pos_emb, head = weight(v, d), weight(s, d), weight(v, d)
    layers = [
        (norm(), weight(3 * d, d), weight(d, d), norm(), weight(hidden, d), weight(d, hidden))
        for _ in range(config.n_layers)
    ]
    final_norm = norm()
    params: list[torch.Tensor] = [token_emb, pos_emb, head, *final_norm]
    for ln1, qkv, proj, ln2, fc1, fc2 in layers:
        params += [*ln1, qkv, proj, *ln2, fc1, fc2]

    tokens = torch.randint(0, v, (config.batch_size, s + 1), generator=gen, device=dev)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    positions = torch.arange(s, device=dev)
    optimizer = torch.optim.AdamW(params, lr=1e-4, fused=dev.type == "cuda")
    heads = config.n_heads
    b = config.batch_size

    def block(x: torch.Tensor, *w: torch.Tensor) -> torch.Tensor:
        w1, b1, qkv, proj, w2, b2, fc1, fc2 = w
        h = F.layer_norm(x, (d,), w1, b1)
        q, k, val = F.linear(h, qkv).view(b, s, 3, heads, d // heads).unbind(dim=2)
        att = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), val.transpose(1, 2), is_causal=True
        )
        x = x + F.linear(att.transpose(1, 2).reshape(b, s, d), proj)
        h = F.layer_norm(x, (d,), w2, b2)
        return x + F.linear(F.gelu(F.linear(h, fc1)), fc2)

    def run_block(x: torch.Tensor, *w: torch.Tensor) -> torch.Tensor:
        if not recompute:
            return block(x, *w)
        # Full activation recompute per layer, as Megatron's --recompute-granularity full:
        # only the layer's input is kept; backward reruns its forward.
        out: torch.Tensor = checkpoint(block, x, *w, use_reentrant=False)
        return out

    def forward() -> torch.Tensor:
        x = token_emb[inputs] + pos_emb[positions]
        for (w1, b1), qkv, proj, (w2, b2), fc1, fc2 in layers:
            x = run_block(x, w1, b1, qkv, proj, w2, b2, fc1, fc2)
        logits = F.linear(F.layer_norm(x, (d,), *final_norm), head)
        return F.cross_entropy(logits.reshape(-1, v).float(), targets.reshape(-1))

    def step() -> torch.Tensor:
        autocast = (
            torch.autocast(dev.type, dtype=_DTYPES[precision])
            if precision in _DTYPES
            else contextlib.nullcontext()
        )
        with autocast:
            loss = forward()
        torch.autograd.backward(loss)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        # Returned as a tensor: ``float()`` here would force a device sync inside the step.
        return loss.detach()

    return step
