"""The article's what-ifs (``storage-check``, ``sparse-attention``, ``rule-of-thumb``) and a
plan assembled from an imported cluster description (``forecast --from``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.spec import Plan
from trainbill.whatif import (
    RuleOfThumb,
    SparsityReport,
    StorageReport,
    rule_of_thumb,
    sparse_attention,
    storage_check,
)

if TYPE_CHECKING:
    from trainbill.headline import Budget
    from trainbill.importers import ImportReport
    from trainbill.spec import RunFlags

__all__ = [
    "ImportedPlan",
    "RuleOfThumb",
    "RuleOfThumbCheck",
    "SparsityReport",
    "StorageReport",
    "import_plan",
    "rule_of_thumb_check",
    "sparse_attention",
    "storage_check",
]


@record
class RuleOfThumbCheck:
    """The article's formula next to the itemized bill, and the budget it is judged against."""

    rule: RuleOfThumb
    budget: Budget


def rule_of_thumb_check(plan: Plan, catalog: Catalog) -> RuleOfThumbCheck:
    """The rule of thumb (× 1.3-1.5 × 1.1 if spot) against the forecast and its P90 budget."""
    from trainbill.forecasting import forecast
    from trainbill.headline import budget

    fc = forecast(plan, catalog)
    b, _ = budget(fc, catalog, deadline_hours=plan.run.deadline_hours)
    return RuleOfThumbCheck(rule=rule_of_thumb(fc, catalog, budget_usd=b.usd), budget=b)


@record
class ImportedPlan:
    """A plan assembled from a cluster file, its import report and each field's provenance."""

    plan: Plan
    report: ImportReport
    provenance: dict[str, list[str]]


def import_plan(
    kind: str,
    cluster_file: Path,
    plan_file: Path | None,
    flags: RunFlags | Mapping[str, Mapping[str, Any]],
    catalog: Catalog,
) -> ImportedPlan:
    """Plan file < imported cluster < flags; with the import report and field provenance.

    When the import names an instance and node count, a GPU/GPU-count description in the plan
    file is dropped (and vice versa).
    """
    from trainbill.importers import import_cluster, provenance
    from trainbill.spec import load_plan, merge_plan_dicts, plan_from_dict
    from trainbill.spec.flags import given_sections

    report = import_cluster(kind, cluster_file, catalog=catalog)
    base: dict[str, Any] = {}
    if plan_file is not None:
        base = load_plan(plan_file).model_dump(exclude_none=True, exclude_defaults=True)
    overrides = given_sections(flags)
    imp_cluster = report.plan.get("cluster", {})
    base_cluster = base.get("cluster", {})
    if "instance" in imp_cluster:
        base_cluster.pop("gpu", None)
        base_cluster.pop("gpus", None)
    if "gpu" in imp_cluster:
        base_cluster.pop("instance", None)
        base_cluster.pop("nodes", None)
    given = merge_plan_dicts(base, overrides)
    merged = merge_plan_dicts(merge_plan_dicts(base, report.plan), overrides)
    source = (
        f"{cluster_file}"
        + (f" + {plan_file}" if plan_file else "")
        + (" + flags" if overrides else "")
    )
    plan = plan_from_dict(merged, source=source)
    return ImportedPlan(plan=plan, report=report, provenance=provenance(report, given))
