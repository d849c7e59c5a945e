"""Map the name a device reports to the catalog's accelerator id.

Pure string matching, no torch: ``torch.cuda.get_device_name()`` returns marketing names
("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB") while the catalog keys accelerators by
short ids (``h100``, ``a100-40gb``). Variants whose peak differs from the catalog row's form
factor (H100 PCIe/NVL, H200 NVL) map to ``None`` on purpose: dividing by the SXM peak would
understate their MFU, and an honest "unknown" is better than a wrong number.
"""

from __future__ import annotations

import re

__all__ = ["accelerator_id_for_device_name"]

# (pattern, catalog id or None). First match wins, so specific variants come before the
# family they belong to ("L40S" before "L4", "H100 PCIe" before "H100").
_RULES: tuple[tuple[re.Pattern[str], str | None], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), accelerator)
    for pattern, accelerator in (
        (r"\bB200\b", "b200"),
        (r"\bH200\b.*\bNVL\b", None),
        (r"\bH200\b", "h200"),
        (r"\bH800\b", "h800"),
        (r"\bH100\b.*\b(PCIe|NVL)\b", None),
        (r"\bH100\b", "h100"),
        (r"\bA100\b.*\b40\s*GB\b", "a100-40gb"),
        (r"\bA100\b.*\b80\s*GB\b", "a100-80gb"),
        (r"\bA10G\b", "a10g"),
        (r"\bL40S\b", "l40s"),
        (r"\bL4\b", "l4"),
        (r"\bV100\b", "v100"),
        (r"\bMI300X\b", "mi300x"),
    )
)


def accelerator_id_for_device_name(device_name: str) -> str | None:
    """Return the catalog accelerator id for a device name, or ``None`` if unknown.

    Args:
        device_name: what the runtime reports, e.g. ``torch.cuda.get_device_name()``.

    Returns:
        The catalog id (``"h200"``, ``"a100-80gb"``…) or ``None`` for a CPU, an unlisted
        device, or a variant whose peak the catalog does not carry.

    Examples:
        >>> accelerator_id_for_device_name("NVIDIA H100 80GB HBM3")
        'h100'
        >>> accelerator_id_for_device_name("NVIDIA L40S")
        'l40s'
        >>> accelerator_id_for_device_name("NVIDIA H100 PCIe") is None
        True
    """
    normalized = device_name.replace("-", " ").replace("_", " ")
    for pattern, accelerator in _RULES:
        if pattern.search(normalized):
            return accelerator
    return None
