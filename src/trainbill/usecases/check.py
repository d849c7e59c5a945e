"""Check: a quote's audit (is the implied MFU physically possible?) and a claimed bill's audit,
line by line against the plan's own forecast (``trainbill check``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainbill.check import QuoteAudit, audit_quote
from trainbill.errors import SpecError

if TYPE_CHECKING:
    from trainbill.catalog import Catalog
    from trainbill.claims import ClaimAudit
    from trainbill.spec import Plan

__all__ = ["QuoteAudit", "audit_claims_file", "audit_quote"]


def _claimed_plan(doc: dict[str, Any], path: Path) -> Plan:
    """The claim's plan: a path relative to the claims file, or an inline ``[plan]`` table."""
    from trainbill.spec import load_plan, plan_from_dict

    raw = doc.get("plan")
    if isinstance(raw, str):
        return load_plan(path.parent / raw)
    if isinstance(raw, dict):
        return plan_from_dict(raw, source=f"{path} [plan]")
    msg = (
        'give the run\'s plan: plan = "plan.toml" (relative to this file) or an inline [plan] table'
    )
    raise SpecError(msg, source=str(path), field="plan")


def audit_claims_file(path: Path, catalog: Catalog) -> ClaimAudit:
    """Audit the claimed bill in ``path`` (TOML: quote_usd, total_usd, plan, [[lines]]) against
    its plan's forecast; a rule error names the claims file.

    The file is read through the input gate (a regular file under the claims size cap, TOML
    within the depth and number caps).
    """
    from trainbill._io import parse_toml, read_input_text
    from trainbill.claims import audit_claims, claims_from_dict
    from trainbill.usecases.price import forecast_plan

    text = read_input_text(path, kind="claims", what="claims file")
    doc = parse_toml(text, source=str(path))
    claim = claims_from_dict({k: v for k, v in doc.items() if k != "plan"}, source=str(path))
    plan = _claimed_plan(doc, path)
    fc = forecast_plan(plan, catalog, source=str(path))
    try:
        return audit_claims(claim, fc, catalog)
    except SpecError as exc:
        if exc.source is not None:
            raise
        bare = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
        raise SpecError(bare, source=str(path), field=exc.field) from None
