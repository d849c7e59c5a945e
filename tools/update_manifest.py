"""Rewrite src/trainbill/catalog/data/MANIFEST.toml with fresh SHA-256 hashes.

Run after editing any packaged catalog file: ``python tools/update_manifest.py``. The test
suite checks the hashes, so a data edit without a manifest update fails CI on purpose: every
data change is a reviewed, dated change.
"""

from __future__ import annotations

import hashlib
import sys
from datetime import UTC, datetime
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "src" / "trainbill" / "catalog" / "data"
FILES = {
    "accelerators.csv": "Vendor datasheets (see each row's source)",
    "instances.csv": (
        "Provider instance pages and ../shared/data/REFERENCE-billing-and-prices.md §4"
    ),
    "prices.csv": (
        "AWS Price List, SkyPilot catalogs, real CUR/FOCUS bills (REFERENCE §4; each row cites)"
    ),
    "spot_advisor.csv": "AWS Spot Instance Advisor feed snapshots (REFERENCE §5.1)",
    "accelerator_peaks.csv": "Vendor datasheets: FP16, TF32 and FP32 peaks (see each row's source)",
    "assumptions.toml": "Published runs, failure studies and stated assumptions (each entry cites)",
    "time_model_fit.toml": (
        "Time-model parameters fitted to published runs by "
        "tools/fit_time_model.py (fit date and residuals inside)"
    ),
}


def main() -> int:
    """Write the manifest; print the version."""
    version = sys.argv[1] if len(sys.argv) > 1 else datetime.now(UTC).date().isoformat()
    lines = [
        "# Catalog manifest: schema version, snapshot date and a hash per data file.",
        "# Regenerate with: python tools/update_manifest.py",
        "schema_version = 1",
        f'version = "{version}"',
        f'snapshot = "{version}"',
        "",
    ]
    for name, source in FILES.items():
        digest = hashlib.sha256((DATA / name).read_bytes()).hexdigest()
        lines += [f'[files."{name}"]', f'source = "{source}"', f'sha256 = "{digest}"', ""]
    tmp = DATA / "MANIFEST.toml.tmp"
    tmp.write_text("\n".join(lines), encoding="utf-8")
    tmp.replace(DATA / "MANIFEST.toml")
    print(version)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
