"""Shared fixtures for the profiler tests."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Run torch single-threaded when it is installed.

    On a shared 2-core machine, two intra-op threads contending with other processes made a
    tiny step 50× slower at times (seen); the tests check the profiler, not that noise.
    """
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
