"""Read cluster descriptions platform teams already have into plan dicts, with a report.

HyperPod ``create-cluster`` JSON, SkyPilot task YAML and ``terraform show -json`` plans each
describe *where* a run happens (instances, counts, spot, storage, NAT) but rarely *what* it
trains or for how long. An importer turns what the file says into a partial plan dict and an
``ImportReport`` that names, for every value, the file element it came from; whatever the file
does not say comes from the plan file, flags or the catalog's assumptions, and ``provenance``
says which. Elements we cannot price are listed in the report, never silently dropped.

Every parser takes text (not a path) so it stays pure; ``read_cluster_file`` is the one place
that touches the file system.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import (
    ClusterImportError,
    is_unicode_text,
    not_unicode_message,
    too_deep_message,
)

__all__ = [
    "FORMATS",
    "TRACKED_FIELDS",
    "ClusterImportError",
    "ImportReport",
    "export_skypilot",
    "import_cluster",
    "import_text",
    "provenance",
    "read_cluster_file",
]

Format = Literal["hyperpod", "skypilot", "terraform"]
FORMATS: tuple[str, ...] = ("hyperpod", "skypilot", "terraform")

#: Plan fields a reader cares about when a cluster is imported: each is reported as imported,
#: given by the plan file/flags, or defaulted from the catalog's assumptions.
TRACKED_FIELDS: tuple[str, ...] = (
    "cluster.provider",
    "cluster.region",
    "cluster.instance",
    "cluster.nodes",
    "cluster.gpu",
    "cluster.gpus",
    "cluster.orchestrator",
    "cluster.zone",
    "cluster.extra_groups",
    "purchase.spot_fraction",
    "storage.ebs_gb_per_node",
    "storage.ebs_iops",
    "storage.ebs_throughput_mibps",
    "storage.fsx_capacity_gb",
    "storage.fsx_tier",
    "network.nat_gateways",
    "network.public_ips_per_node",
    "run.hours",
    "model.params",
    "model.tokens",
    "model.seq_len",
    "data.dataset_gb",
    "data.source",
    "data.location",
    "checkpoint.target",
)


@record
class ImportReport:
    """What an importer read: a partial plan dict and where each value came from.

    ``imported`` pairs a plan field (``cluster.nodes``) with the file element it came from
    (``InstanceGroups[0].InstanceCount``). ``unsupported`` lists elements that were read but
    not priced (resource types and keys we do not model), so a reader sees what the forecast
    leaves out. ``notes`` explains every interpretation the importer had to make.
    """

    kind: str
    source: str
    plan: Mapping[str, Any]
    imported: tuple[tuple[str, str], ...]
    unsupported: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready view (``trainbill forecast --from ... --json`` puts it under ``import``)."""
        return {
            "kind": self.kind,
            "source": self.source,
            "plan": _jsonable(self.plan),
            "imported": [{"field": f, "from": e} for f, e in self.imported],
            "unsupported": list(self.unsupported),
            "notes": list(self.notes),
        }


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    return x


def import_text(kind: str, text: str, *, source: str, catalog: Catalog) -> ImportReport:
    """Parse a cluster description of ``kind`` (hyperpod, skypilot, terraform)."""
    if kind not in FORMATS:
        msg = f"{kind!r} is not a supported cluster format; allowed values: {', '.join(FORMATS)}"
        raise ClusterImportError(msg, source="command line", field="--from")
    import importlib

    parser = importlib.import_module(f"trainbill.importers.{kind}")
    try:
        report: ImportReport = parser.parse(text, source=source, catalog=catalog)
    except RecursionError:  # the JSON/YAML parsers and the walkers recurse per level
        raise ClusterImportError(too_deep_message(), source=source) from None
    bad = _not_unicode(report.as_dict())
    if bad is not None:  # every string of the report is printed: refuse what cannot be
        raise ClusterImportError(not_unicode_message(bad), source=source)
    return report


def _not_unicode(x: Any) -> str | None:
    """The first string in a JSON-ready value that is not Unicode text, else None."""
    if isinstance(x, str):
        return None if is_unicode_text(x) else x
    items = x.items() if isinstance(x, Mapping) else enumerate(x) if isinstance(x, list) else ()
    for key, value in items:
        found = _not_unicode(key) if isinstance(key, str) else None
        found = found if found is not None else _not_unicode(value)
        if found is not None:
            return found
    return None


def import_error(message: str, source: str) -> ClusterImportError:
    """The input gate's error factory for cluster files (``trainbill._io.ErrorFactory``)."""
    return ClusterImportError(message, source=source)


def read_cluster_file(path: Path) -> str:
    """The file's text through the input gate (a regular file under the import size cap), or
    a ``ClusterImportError`` naming it (missing, a directory, a FIFO, too large, not UTF-8)."""
    from trainbill._io import read_input_text

    return read_input_text(path, kind="import", what="cluster file", error=import_error)


def import_cluster(kind: str, path: Path, *, catalog: Catalog) -> ImportReport:
    """Read and parse a cluster file."""
    return import_text(kind, read_cluster_file(path), source=str(path), catalog=catalog)


def _has(d: Mapping[str, Any], dotted: str) -> bool:
    section, _, key = dotted.partition(".")
    sec = d.get(section)
    if not isinstance(sec, Mapping):
        return False
    value = sec.get(key)
    return value is not None and value not in ((), [])


def provenance(report: ImportReport, given: Mapping[str, Any]) -> dict[str, list[str]]:
    """Split ``TRACKED_FIELDS`` into imported / given (plan file or flags) / defaulted.

    ``given`` is the plan dict from the plan file and flags (without the import). A field the
    import sets wins over the plan file but loses to flags; the caller merges in that order.
    """
    imported_fields = {f for f, _ in report.imported}
    out: dict[str, list[str]] = {"imported": [], "given": [], "defaulted": []}
    described = imported_fields | {f for f in TRACKED_FIELDS if _has(given, f)}
    skip: set[str] = set()
    if described & {"cluster.instance", "cluster.nodes"}:
        skip |= {"cluster.gpu", "cluster.gpus"}
    if described & {"cluster.gpu", "cluster.gpus"} and "cluster.instance" not in described:
        skip |= {"cluster.instance", "cluster.nodes"}
    for f in TRACKED_FIELDS:
        if f in skip:
            continue
        if f in imported_fields:
            element = next(e for g, e in report.imported if g == f)
            out["imported"].append(f"{f} <- {element}")
        elif _has(given, f):
            out["given"].append(f)
        else:
            out["defaulted"].append(f)
    return out


from trainbill.importers.export import export_skypilot
