"""The run registry's use cases: each front end (CLI, web) makes one call here and renders.

``record`` forecasts a plan and stores it; ``close`` reads the run's tagged bill rows
(``trainbill-run=<id>``, through the same filter as ``bill summary --where``) and stores the
actuals; ``list_runs``, ``show``, ``delete``; ``calibrate`` fits the team's factors
(``history``) and their leave-one-run-out error; ``export_focus`` writes the forecasts as FOCUS
rows. Every call opens the registry (``store.open_store``: migrations on first use) and does
its writes in one transaction, so an interrupted command leaves the registry as it was.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainbill._record import record as value_type
from trainbill.errors import RegistryError, RunNotFoundError, SpecError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from trainbill.catalog import Catalog
    from trainbill.ledger import LineItem
    from trainbill.runs.history import HistoryCalibration
    from trainbill.runs.models import LedgerLineRow, RunRow
    from trainbill.runs.store import Store
    from trainbill.spec import Plan

__all__ = [
    "TAG_KEY",
    "Closure",
    "Recorded",
    "calibrate",
    "close",
    "delete",
    "export",
    "forecast_history",
    "history_calibration",
    "list_runs",
    "record",
    "show",
    "tag_snippets",
    "upgrade",
]

#: The tag that names a run's resources, and so its rows in the bill.
TAG_KEY = "trainbill-run"
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_NEAREST = 5


def _open(db: str | None) -> Store:
    """The registry (``store.open_store``), or one line saying which extra to install."""
    try:
        import alembic  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError:
        raise RegistryError(
            "the run registry needs SQLAlchemy and Alembic: pip install 'trainbill[registry]'"
        ) from None
    from trainbill.runs.store import open_store

    return open_store(db)


def tag_snippets(run_id: str) -> dict[str, str]:
    """Where to put the tag: Terraform's AWS provider ``default_tags``, a SkyPilot task's
    ``labels``, a SageMaker HyperPod cluster's ``Tags`` (create-cluster JSON)."""
    return {
        "terraform": (
            'provider "aws" {\n  default_tags {\n    tags = {\n'
            f'      "{TAG_KEY}" = "{run_id}"\n    }}\n  }}\n}}'
        ),
        "skypilot": f"resources:\n  labels:\n    {TAG_KEY}: {run_id}",
        "hyperpod": json.dumps({"Tags": [{"Key": TAG_KEY, "Value": run_id}]}, indent=2),
    }


@value_type
class Recorded:
    """A stored forecast: its id, the tag for its resources and where to put it."""

    id: str
    name: str
    total_usd: float
    p10_usd: float
    p50_usd: float
    p90_usd: float
    db: str

    @property
    def tag(self) -> str:
        return f"{TAG_KEY}={self.id}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "tag": self.tag,
            "tag_key": TAG_KEY,
            "total_usd": self.total_usd,
            "p10_usd": self.p10_usd,
            "p50_usd": self.p50_usd,
            "p90_usd": self.p90_usd,
            "snippets": tag_snippets(self.id),
            "db": self.db,
        }


def _check_id(run_id: str) -> None:
    if not _ID_RE.match(run_id):
        msg = (
            f"run id {run_id!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit (it becomes a cloud tag value)"
        )
        raise SpecError(msg, source="command line", field="--id")


def _next_id(s: Session) -> str:
    from sqlalchemy import select

    from trainbill.runs.models import RunRow

    taken = [
        int(m.group(1))
        for (i,) in s.execute(select(RunRow.id))
        if (m := re.match(r"^run-(\d+)$", i))
    ]
    return f"run-{max(taken, default=0) + 1}"


def _json_ready(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def record(
    plan: Plan,
    *,
    plan_text: str,
    plan_source: str,
    catalog: Catalog,
    run_id: str | None = None,
    name: str | None = None,
    db: str | None = None,
) -> Recorded:
    """Forecast ``plan`` and store it (with ``plan_text``, the plan as written).

    Raises:
        RegistryError: the id is taken, or the database cannot be reached.
    """
    from sqlalchemy.exc import IntegrityError

    import trainbill
    from trainbill.bills.reconcile import forecast_by_bill_category
    from trainbill.forecasting import forecast
    from trainbill.runs.models import RECORD_VERSION, RunRow

    if run_id is not None:
        _check_id(run_id)
    fc = forecast(plan, catalog)  # before the database: a bad plan writes nothing
    doc = _json_ready(fc.as_dict())
    u = fc.usage
    p10 = fc.band.total_usd_p10 if fc.band else fc.total_usd
    p90 = fc.band.total_usd_p90 if fc.band else fc.total_usd
    store = _open(db)

    def write(s: Session) -> RunRow:
        rid = run_id or _next_id(s)
        if s.get(RunRow, rid) is not None:
            raise RegistryError(
                f"run {rid} is already recorded in {store.where}; choose another --id"
            )
        row = RunRow(
            id=rid,
            name=name or u.name,
            created_at=datetime.now(UTC),
            record_version=RECORD_VERSION,
            tool_version=trainbill.__version__,
            plan_source=plan_source,
            plan_text=plan_text,
            plan=_json_ready(plan.model_dump()),
            forecast=doc,
            catalog_version=fc.catalog_version,
            prices_as_of=u.as_of.isoformat(),
            provider=u.provider,
            gpus=int(u.gpus),
            gpu_node_hours=float(u.node_hours),
            total_usd=fc.total_usd,
            p10_usd=p10,
            # The point forecast: the time model's central estimate, between its P10 and P90.
            p50_usd=fc.total_usd,
            p90_usd=p90,
            by_category=forecast_by_bill_category(fc.ledger.lines),
        )
        row.lines = _line_rows(fc.ledger.lines)
        s.add(row)
        s.flush()
        return row

    try:
        for _ in range(20):  # a default id taken by a concurrent writer (PostgreSQL): next one
            try:
                row = store.run(write)
                break
            except IntegrityError:
                if run_id is not None:
                    raise RegistryError(
                        f"run {run_id} is already recorded; choose another --id"
                    ) from None
        else:
            raise RegistryError("could not allocate a run id; give one with --id")
    finally:
        store.close()
    return Recorded(
        id=row.id,
        name=row.name,
        total_usd=row.total_usd,
        p10_usd=row.p10_usd,
        p50_usd=row.p50_usd,
        p90_usd=row.p90_usd,
        db=store.where,
    )


def _line_rows(lines: Sequence[LineItem]) -> list[LedgerLineRow]:
    """The forecast's ledger lines as rows, in ledger order, each with the bill category a
    bill's rows are compared under (``runs close``)."""
    from trainbill.bills.reconcile import bill_category_of
    from trainbill.runs.models import LedgerLineRow

    return [
        LedgerLineRow(
            position=i,
            category=ln.category,
            bill_category=bill_category_of(ln.category, ln.service_category),
            item=ln.item,
            quantity=ln.quantity,
            unit=ln.unit,
            unit_price_usd=ln.unit_price_usd,
            cost_usd=ln.cost_usd,
            basis=ln.basis,
            source=ln.source,
            provenance=ln.provenance.value,
            service_category=ln.service_category,
            pricing_category=ln.pricing_category,
        )
        for i, ln in enumerate(lines)
    ]


def _get(s: Session, run_id: str, where: str) -> RunRow:
    from sqlalchemy import select

    from trainbill.runs.models import RunRow

    row = s.get(RunRow, run_id)
    if row is not None:
        return row
    ids = [i for (i,) in s.execute(select(RunRow.id).order_by(RunRow.created_at.desc()))]
    near = difflib.get_close_matches(run_id, ids, n=_NEAREST, cutoff=0.4) or ids[:_NEAREST]
    hint = f"; nearest: {', '.join(near)}" if near else "; the registry holds no runs"
    raise RunNotFoundError(f"no run {run_id!r} in {where}{hint}")


@value_type
class Closure:
    """A closed run: forecast against the bill's tagged rows, by bill category."""

    id: str
    forecast_total_usd: float
    actual_total_usd: float
    rows: int
    currency: str
    by_category: dict[str, dict[str, float]]
    bill_files: tuple[str, ...]
    replaced: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "forecast_total_usd": self.forecast_total_usd,
            "actual_total_usd": self.actual_total_usd,
            "variance_usd": self.actual_total_usd - self.forecast_total_usd,
            "rows": self.rows,
            "currency": self.currency,
            "by_category": self.by_category,
            "bill_files": list(self.bill_files),
            "replaced": self.replaced,
        }


def _compare(forecast: dict[str, float], actual: dict[str, float]) -> dict[str, dict[str, float]]:
    cats = [c for c in dict.fromkeys([*forecast, *actual]) if forecast.get(c) or actual.get(c)]
    return {
        c: {
            "forecast_usd": forecast.get(c, 0.0),
            "actual_usd": actual.get(c, 0.0),
            "variance_usd": actual.get(c, 0.0) - forecast.get(c, 0.0),
        }
        for c in cats
    }


def _closed_twice(run_id: str, closed_at: datetime) -> RegistryError:
    return RegistryError(
        f"run {run_id} was closed on {closed_at:%Y-%m-%d %H:%M} UTC; give --replace to "
        "replace its actuals"
    )


def close(
    run_id: str,
    bills: Sequence[str],
    *,
    engine: str = "duckdb",
    since: str | None = None,
    until: str | None = None,
    replace: bool = False,
    db: str | None = None,
) -> Closure:
    """Read the rows tagged ``trainbill-run=<run_id>`` (within [since, until]) and store them
    as the run's actuals.

    Raises:
        RunNotFoundError: no such run (the message lists the nearest ids).
        RegistryError: closed already (without ``replace``), or no tagged row in the bills:
            nothing is stored then.
    """
    from trainbill.bills.filters import bill_filter
    from trainbill.bills.summary import read_bill
    from trainbill.runs.models import ActualRow

    where = bill_filter(tags=[(TAG_KEY, run_id)], since=since, until=until)
    store = _open(db)
    try:
        # Checked before the bills are read (a long read for nothing), and again on write.
        def check(s: Session) -> None:
            row = _get(s, run_id, store.where)
            if row.actual is not None and not replace:
                raise _closed_twice(run_id, row.actual.closed_at)

        store.run(check)
        summary = read_bill(list(bills), engine=engine, where=where)
        if summary.rows == 0:
            raise RegistryError(
                f"{', '.join(summary.files)}: no rows tagged {TAG_KEY}={run_id} "
                f"({where.describe()}); nothing stored"
            )
        actual = {k: float(v) for k, v in summary.by_category.items() if v}

        def write(s: Session) -> Closure:
            row = _get(s, run_id, store.where)
            replaced = row.actual is not None
            if replaced and not replace:
                raise _closed_twice(run_id, row.actual.closed_at)  # type: ignore[union-attr]
            if row.actual is not None:
                s.delete(row.actual)
                s.flush()
            row.actual = ActualRow(
                closed_at=datetime.now(UTC),
                bill_files=list(summary.files),
                engine=engine,
                where=where.as_dict(),
                rows=summary.rows,
                currency=summary.currency,
                total_usd=summary.billed_cost,
                by_category=actual,
                gpu_instance_hours=summary.gpu_instance_hours,
                period_start=summary.period_start,
                period_end=summary.period_end,
            )
            return Closure(
                id=run_id,
                forecast_total_usd=row.total_usd,
                actual_total_usd=summary.billed_cost,
                rows=summary.rows,
                currency=summary.currency,
                by_category=_compare(dict(row.by_category), actual),
                bill_files=summary.files,
                replaced=replaced,
            )

        return store.run(write)
    finally:
        store.close()


def _summary(row: RunRow) -> dict[str, Any]:
    a = row.actual
    return {
        "id": row.id,
        "name": row.name,
        "created_at": row.created_at.isoformat(),
        "provider": row.provider,
        "gpus": row.gpus,
        "forecast_total_usd": row.total_usd,
        "p10_usd": row.p10_usd,
        "p50_usd": row.p50_usd,
        "p90_usd": row.p90_usd,
        "closed": a is not None,
        "actual_total_usd": a.total_usd if a is not None else None,
        "error": (row.total_usd - a.total_usd) / a.total_usd
        if a is not None and a.total_usd
        else None,
    }


def list_runs(*, db: str | None = None) -> list[dict[str, Any]]:
    """Every run, oldest first, with its forecast and (when closed) actual totals."""
    from sqlalchemy import select
    from sqlalchemy.orm import selectinload

    from trainbill.runs.models import RunRow

    store = _open(db)
    try:
        return store.run(
            lambda s: [
                _summary(r)
                for r in s.scalars(
                    select(RunRow)
                    .options(selectinload(RunRow.actual))
                    .order_by(RunRow.created_at, RunRow.id)
                )
            ]
        )
    finally:
        store.close()


def show(run_id: str, *, db: str | None = None) -> dict[str, Any]:
    """Everything stored about one run: the plan as written, the resolved inputs, the
    forecast document, every ledger line, the actuals by category."""

    store = _open(db)

    def read(s: Session) -> dict[str, Any]:
        row = _get(s, run_id, store.where)
        a = row.actual
        return {
            **_summary(row),
            "record_version": row.record_version,
            "tool_version": row.tool_version,
            "catalog_version": row.catalog_version,
            "prices_as_of": row.prices_as_of,
            "plan_source": row.plan_source,
            "plan_text": row.plan_text,
            "plan": row.plan,
            "gpu_node_hours": row.gpu_node_hours,
            "forecast_by_category": row.by_category,
            "lines": [
                {
                    "category": ln.category,
                    "bill_category": ln.bill_category,
                    "item": ln.item,
                    "quantity": ln.quantity,
                    "unit": ln.unit,
                    "unit_price_usd": ln.unit_price_usd,
                    "cost_usd": ln.cost_usd,
                    "basis": ln.basis,
                    "source": ln.source,
                    "provenance": ln.provenance,
                }
                for ln in row.lines
            ],
            "forecast": row.forecast,
            "actual": None
            if a is None
            else {
                "closed_at": a.closed_at.isoformat(),
                "bill_files": a.bill_files,
                "engine": a.engine,
                "where": a.where,
                "rows": a.rows,
                "currency": a.currency,
                "total_usd": a.total_usd,
                "by_category": a.by_category,
                "gpu_instance_hours": a.gpu_instance_hours,
                "period_start": a.period_start,
                "period_end": a.period_end,
            },
            "by_category": _compare(dict(row.by_category), dict(a.by_category) if a else {}),
        }

    try:
        return store.run(read)
    finally:
        store.close()


def delete(run_id: str, *, db: str | None = None) -> str:
    """Remove a run with its lines and actuals; returns its id."""

    store = _open(db)

    def remove(s: Session) -> str:
        s.delete(_get(s, run_id, store.where))
        return run_id

    try:
        return store.run(remove)
    finally:
        store.close()


def _closed_runs(s: Session) -> list[Any]:
    from sqlalchemy import select
    from sqlalchemy.orm import selectinload

    from trainbill.runs.history import ClosedRun
    from trainbill.runs.models import RunRow

    rows = s.scalars(
        select(RunRow).options(selectinload(RunRow.actual)).order_by(RunRow.created_at, RunRow.id)
    )
    return [
        ClosedRun(
            id=r.id,
            forecast_by_category=dict(r.by_category),
            forecast_node_hours=r.gpu_node_hours,
            actual_by_category=dict(r.actual.by_category),
            actual_node_hours=r.actual.gpu_instance_hours,
        )
        for r in rows
        if r.actual is not None
    ]


def history_calibration(catalog: Catalog, *, db: str | None = None) -> HistoryCalibration:
    """The team's factors from every closed run (``forecast --calibration history``).

    Raises:
        RegistryError: no closed run yet (there is nothing to learn from).
    """
    from trainbill.runs.history import fit_history

    store = _open(db)
    try:
        runs = store.run(_closed_runs)
    finally:
        store.close()
    if not runs:
        raise RegistryError(
            f"--calibration history: no closed run in {store.where}; close one with "
            "'trainbill runs close ID BILLS'"
        )
    return fit_history(runs, prior_runs=float(catalog.value("history.prior_runs")))


def forecast_history(fc: Any, catalog: Catalog, *, db: str | None = None) -> Any:
    """``fc`` with the team's factors from the registry applied to its lines
    (``forecast --calibration history``); each changed line says so in its basis."""
    from trainbill.bills.reconcile import bill_category_of
    from trainbill.runs.history import apply_history

    return apply_history(fc, history_calibration(catalog, db=db), bill_category_of)


def calibrate(catalog: Catalog, *, db: str | None = None) -> dict[str, Any]:
    """The team's factors and their leave-one-run-out error against the packaged model."""
    from trainbill.runs.history import fit_history, leave_one_out

    k = float(catalog.value("history.prior_runs"))
    store = _open(db)
    try:
        runs = store.run(_closed_runs)
    finally:
        store.close()
    return {
        **fit_history(runs, prior_runs=k).as_dict(),
        "closed_runs": len(runs),
        "leave_one_out": leave_one_out(runs, prior_runs=k),
    }


def plan_text_of(path: Path | None) -> str:
    """The plan file as written ('' when the plan came from flags alone)."""
    if path is None:
        return ""
    from trainbill._io import read_input_text

    return read_input_text(path, kind="plan", what="plan file")


def upgrade(*, db: str | None = None) -> dict[str, Any]:
    """Migrate the registry to head (what every command does on first use) and say where it
    is and at which schema version."""
    from trainbill.runs.store import current_revision

    store = _open(db)
    try:
        with store.engine.connect() as con:
            version = current_revision(con)
        return {"db": store.where, "version": version}
    finally:
        store.close()


def export(
    path: Path, *, fmt: str = "focus", overwrite: bool = False, db: str | None = None
) -> dict[str, Any]:
    """Write every stored forecast as FOCUS 1.2 rows to ``path`` (CSV), atomically; an
    existing file is kept unless ``overwrite``."""
    import csv
    import io

    from trainbill._io import atomic_write_text
    from trainbill.errors import DestinationError
    from trainbill.runs.focus_export import COLUMNS, focus_rows
    from trainbill.runs.models import RunRow

    if fmt != "focus":
        raise SpecError(
            f"--format {fmt!r}: allowed: focus", source="command line", field="--format"
        )
    store = _open(db)

    def read(s: Session) -> list[dict[str, Any]]:
        from sqlalchemy import select

        return [
            {
                "id": r.id,
                "provider": r.provider,
                "run_date": r.forecast.get("run_date") or r.prices_as_of,
                "wall_hours": (r.forecast.get("time") or {}).get("wall_hours") or 0.0,
                "lines": [
                    {
                        "category": ln.category,
                        "item": ln.item,
                        "quantity": ln.quantity,
                        "unit": ln.unit,
                        "cost_usd": ln.cost_usd,
                        "basis": ln.basis,
                        "service_category": ln.service_category,
                    }
                    for ln in r.lines
                ],
            }
            for r in s.scalars(select(RunRow).order_by(RunRow.created_at, RunRow.id))
        ]

    try:
        runs = store.run(read)
    finally:
        store.close()
    rows = focus_rows(runs)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    try:
        atomic_write_text(path, buf.getvalue(), replace=overwrite)
    except DestinationError as exc:
        raise SpecError(
            f"{exc}; give --force to replace it", source=str(path), field="-o"
        ) from None
    return {"path": str(path), "rows": len(rows), "runs": len(runs), "format": "focus"}
