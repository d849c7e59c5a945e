"""Web calculator and JSON API (FastAPI). Needs the ``web`` extra: ``pip install 'trainbill[web]'``.

``create_app()`` builds the ASGI app; ``trainbill serve`` runs it with uvicorn on localhost.
"""

from __future__ import annotations

from trainbill.web.app import LIMITS, Limits, create_app

__all__ = ["LIMITS", "Limits", "create_app"]
