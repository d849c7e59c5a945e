"""Imports every command module so each registers its commands on ``app``.

One line per command group; a new group adds one line here and nothing else.
"""

from __future__ import annotations

from trainbill.cli import (
    bills,  # noqa: F401
    diff,  # noqa: F401
    forecast,  # noqa: F401
    optimize,  # noqa: F401
    prices,  # noqa: F401
    profile,  # noqa: F401
    report,  # noqa: F401
    simulate,  # noqa: F401
    whatif,  # noqa: F401
)
