"""Lazy access to PyTorch, which is an optional extra (``trainbill[profile]``).

``import trainbill`` and the core CLI never import torch: it takes seconds to import and a
forecast does not need it. Every function that touches torch first calls :func:`ensure_torch`
(for a clear error when it is missing) and then does ``import torch`` locally, which keeps
the static types that a module-level ``ModuleType`` handle would lose.
"""

from __future__ import annotations

import importlib

from trainbill.profile._errors import ProfileError

__all__ = ["ensure_torch"]

INSTALL_HINT = "install it with: pip install 'trainbill[profile]'"


def ensure_torch() -> None:
    """Import ``torch`` once, or raise :class:`ProfileError` saying how to install it."""
    try:
        importlib.import_module("torch")
    except ImportError as exc:
        msg = f"profiling needs PyTorch, which is not installed ({exc}); {INSTALL_HINT}"
        raise ProfileError(msg) from None
