"""Commitment advice: the Savings Plan level and term for monthly GPU-hour usage
(``trainbill commit``)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from trainbill.catalog import Catalog
from trainbill.commit import DEFAULT_INSTANCE, RULE_OF_THUMB, CommitAdvice
from trainbill.commit import advise_commitment as _advise

__all__ = ["DEFAULT_INSTANCE", "RULE_OF_THUMB", "CommitAdvice", "advise_commitment"]


def advise_commitment(
    usage_csv: Path,
    catalog: Catalog,
    *,
    instance: str = DEFAULT_INSTANCE,
    region: str | None = None,
    as_of: date,
    horizon_months: int = 36,
    kind: str | None = None,
) -> CommitAdvice:
    """Read the monthly usage file (month, gpu_hours) through the input gate and advise on it
    (``trainbill.commit.advise_commitment``)."""
    from trainbill._io import read_input_text
    from trainbill.commit import parse_usage_csv

    text = read_input_text(usage_csv, kind="usage", what="usage file")
    usage = parse_usage_csv(text, source=str(usage_csv))
    return _advise(
        usage, catalog, instance=instance, region=region, as_of=as_of,
        horizon_months=horizon_months, kind=kind,
    )  # fmt: skip
