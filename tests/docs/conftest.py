"""The docs tests import the generators and the example renderer from ``tools/`` (scripts run
at build and merge time, not part of the package)."""

from __future__ import annotations

import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[2] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))
