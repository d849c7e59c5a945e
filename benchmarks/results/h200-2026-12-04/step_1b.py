"""The 1.04B transformer of benchmarks/gpu_profile.py as a ``trainbill profile --script`` step."""

from trainbill.profile import make_transformer_step
from trainbill.profile.models import TransformerConfig


def make_step():
    cfg = TransformerConfig(
        vocab_size=32000, d_model=2048, n_layers=18, n_heads=16, seq_len=2048, batch_size=16
    )
    step = make_transformer_step(cfg, device="cuda", precision="bf16")
    return (
        step,
        cfg.tokens_per_step,
        {"model_params": cfg.param_count, "seq_len": 2048, "precision": "bf16"},
    )
