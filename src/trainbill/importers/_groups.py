"""Instance groups → the plan's one GPU worker group plus priced extra groups.

The core prices one GPU instance type as ``cluster.instance``/``nodes``; real clusters also
have head nodes, login nodes or a second pool. Groups of the dominant GPU type (most GPUs)
are merged into the workers (their spot share becomes ``purchase.spot_fraction``); every other
group becomes a ``cluster.extra_groups`` entry priced at its own rate for the whole run.
"""

from __future__ import annotations

import math
from typing import Any

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import suggest
from trainbill.importers import ClusterImportError
from trainbill.spec import MAX_NODES

__all__ = ["MAX_COUNT", "Group", "assemble", "aws_zone_region", "known_instance", "number"]

#: The plan's sanity cap on nodes (``cluster.nodes``); a group count above it is a typo.
MAX_COUNT = MAX_NODES


def aws_zone_region(zone: Any) -> str | None:
    """The region an AWS Availability Zone name is in (``us-east-1c`` → ``us-east-1``), or
    None for anything else: the one rule the importers read a zone's region by."""
    if isinstance(zone, str) and zone[-1:].isalpha() and zone[-2:-1].isdigit():
        return zone[:-1]
    return None


def number(
    value: Any, *, source: str, element: str, minimum: float = 0.0, allow_str: bool = True
) -> float:
    """A finite number >= ``minimum`` from a cluster file, else an error naming the element."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            if not (allow_str and isinstance(value, str)):
                raise ValueError
            out = float(value)
        except ValueError:
            msg = f"must be a number >= {minimum:g} (got {value!r})"
            raise ClusterImportError(msg, source=source, field=element) from None
    else:
        out = float(value)
    if not math.isfinite(out) or out < minimum:
        msg = f"must be a finite number >= {minimum:g} (got {value!r})"
        raise ClusterImportError(msg, source=source, field=element)
    return out


@record
class Group:
    """One instance group as a file states it."""

    element: str
    name: str
    instance: str
    count: int
    spot: bool = False


def known_instance(
    catalog: Catalog, name: str, provider: str, *, source: str, element: str
) -> bool:
    """True for a GPU instance, False for a priced CPU instance; unknown names are an error."""
    if name in catalog.instances:
        return True
    priced = {
        p.item
        for p in catalog.prices
        if p.provider == provider and p.option == "on_demand" and p.unit == "instance-hour"
    }
    if name in priced:
        return False
    known = sorted(
        {i.instance for i in catalog.instances.values() if i.provider == provider} | priced
    )
    msg = (
        f"unknown instance type {name!r}.{suggest(name, known)} Known instance types: "
        f"{', '.join(known)} (add a price point with --catalog for others)"
    )
    raise ClusterImportError(msg, source=source, field=element)


def assemble(
    groups: list[Group], catalog: Catalog, *, provider: str, source: str
) -> tuple[dict[str, Any], list[tuple[str, str]], list[str]]:
    """Cluster and purchase plan sections from groups; (sections, imported, notes)."""
    gpu: list[Group] = []
    cpu: list[Group] = []
    for g in groups:
        if g.count > MAX_COUNT:
            msg = f"{g.count} instances is more than the plan's limit of {MAX_COUNT:,} nodes"
            raise ClusterImportError(msg, source=source, field=g.element)
        (
            gpu
            if known_instance(catalog, g.instance, provider, source=source, element=g.element)
            else cpu
        ).append(g)
    if not gpu:
        found = (
            ", ".join(f"{g.count} × {g.instance} ({g.element})" for g in groups)
            or "no instance groups"
        )
        msg = f"no GPU instances found (found: {found}); trainbill forecasts GPU training clusters"
        raise ClusterImportError(msg, source=source)
    by_type: dict[str, int] = {}
    for g in gpu:
        by_type[g.instance] = (
            by_type.get(g.instance, 0) + g.count * catalog.instance(g.instance).accelerator_count
        )
    main_type = max(by_type, key=lambda t: (by_type[t], t))
    workers = [g for g in gpu if g.instance == main_type]
    others = [g for g in gpu if g.instance != main_type] + cpu
    nodes = sum(g.count for g in workers)
    spot_nodes = sum(g.count for g in workers if g.spot)
    elements = ", ".join(g.element for g in workers)
    cluster: dict[str, Any] = {"provider": provider, "instance": main_type, "nodes": nodes}
    imported = [
        ("cluster.provider", f"{source} (format)"),
        ("cluster.instance", elements),
        ("cluster.nodes", elements),
    ]
    notes: list[str] = []
    if len(workers) > 1:
        notes.append(
            f"{len(workers)} groups of {main_type} merged into {nodes} worker nodes ({elements})"
        )
    sections: dict[str, Any] = {"cluster": cluster}
    if spot_nodes:
        sections["purchase"] = {"spot_fraction": spot_nodes / nodes}
        imported.append(("purchase.spot_fraction", elements))
    elif workers:
        sections["purchase"] = {"spot_fraction": 0.0}
        imported.append(("purchase.spot_fraction", elements))
    if others:
        merged: dict[tuple[str, str, bool], int] = {}
        for g in others:
            key = (g.name, g.instance, g.spot)
            merged[key] = merged.get(key, 0) + g.count
        cluster["extra_groups"] = [
            {"name": n, "instance": i, "count": c, "spot": s} for (n, i, s), c in merged.items()
        ]
        imported.append(("cluster.extra_groups", ", ".join(g.element for g in others)))
        notes.append(
            "extra groups priced as separate compute lines for the whole wall-clock: "
            + ", ".join(f"{c} × {i} ({n})" for (n, i, _s), c in merged.items())
        )
    return sections, imported, notes
