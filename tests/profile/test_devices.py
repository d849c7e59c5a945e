"""Device names as PyTorch reports them map to the catalog's accelerator ids."""

from __future__ import annotations

import pytest

from trainbill.profile import accelerator_id_for_device_name


@pytest.mark.parametrize(
    ("device_name", "expected"),
    [
        # Strings as printed by torch.cuda.get_device_name() on each part.
        ("NVIDIA H200", "h200"),
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
        ("NVIDIA A100 80GB PCIe", "a100-80gb"),
        ("NVIDIA A10G", "a10g"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA L40S", "l40s"),
        ("NVIDIA B200", "b200"),
        ("Tesla V100-SXM2-32GB", "v100"),
        ("AMD Instinct MI300X", "mi300x"),
    ],
)
def test_known_device_names_map_to_catalog_ids(device_name: str, expected: str) -> None:
    """Each marketing name resolves to the catalog row with the same silicon."""
    assert expected == accelerator_id_for_device_name(device_name)


@pytest.mark.parametrize(
    "device_name",
    ["NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "x86_64", "NVIDIA GeForce RTX 4090"],
)
def test_variants_with_other_peaks_and_unknown_devices_are_none(device_name: str) -> None:
    """Form factors whose peak differs from the catalog row, and unknown parts, give None."""
    assert accelerator_id_for_device_name(device_name) is None


def test_l40s_is_not_mistaken_for_l4() -> None:
    """The L40S name contains "L4"; the more specific rule must win."""
    assert accelerator_id_for_device_name("NVIDIA L40S") != "l4"
