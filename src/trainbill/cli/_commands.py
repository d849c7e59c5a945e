"""Imports every command module so each registers its commands on ``app``.

What ``trainbill --help`` pays for; the modules are those named in ``trainbill.cli.COMMANDS``.
"""

from __future__ import annotations

from trainbill.cli import register_commands

register_commands([])
