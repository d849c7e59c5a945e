"""``read_bill``: one pass over a bill, reduced to a ``BillSummary``.

The engine does one ``GROUP BY`` over every row (category, purchase option, GPU flag, service,
usage type, …) and returns a few hundred or thousand groups; everything else (totals,
reconciliation checks, GPU attribution of commitment fees, top lines) is exact ``Decimal``
arithmetic over those groups in Python. One scan keeps a 5-million-row bill close to the speed
of a bare ``SELECT sum(BilledCost)``, and doing the final sums in ``Decimal`` makes the result
independent of the engine's summation order, so DuckDB and Spark agree exactly.
"""

from __future__ import annotations

import decimal
import re
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trainbill._record import record
from trainbill.bills._classify import BILL_CATEGORIES, PURCHASE_OPTIONS, classify
from trainbill.bills._engine import ENGINES, TABLE_ENGINES, open_engine
from trainbill.bills._files import (
    MAX_AMOUNT,
    BillFile,
    BillFormat,
    detect,
    discover,
    find_bad_number,
    find_other_value,
    remote_uri,
)
from trainbill.bills.filters import BillFilter
from trainbill.errors import BillError, TrainbillError

__all__ = ["BY_CHOICES", "BillLine", "BillSummary", "BreakdownRow", "read_bill"]

#: ``--by`` choices; ``tag:KEY`` groups by one tag's value.
BY_CHOICES: tuple[str, ...] = ("tag:KEY", "resource", "service", "day")
_TOP_LINES = 5
_NONE = "(none)"
_CTX = decimal.Context(prec=60)
#: The filter that keeps every row.
_ALL = BillFilter()


@record
class BillLine:
    """A group of bill rows with the same category, service and usage type/description.

    Used to explain a category's total ("storage is high because of EBS:VolumeUsage.gp3").
    """

    category: str
    service: str
    item: str
    rows: int
    billed_cost: float
    effective_cost: float = 0.0

    def cost(self, basis: str = "billed") -> float:
        """The line's cost on a comparison basis: ``billed`` (invoice) or ``effective``
        (amortised)."""
        return self.effective_cost if basis == "effective" else self.billed_cost


@record
class BreakdownRow:
    """Totals for one value of the ``--by`` key (a tag value, resource, service or day)."""

    key: str
    rows: int
    billed_cost: float
    effective_cost: float
    by_category: Mapping[str, float]


@record
class BillSummary:
    """A bill reduced to the ledger's categories; every row counted exactly once.

    ``by_category`` holds BilledCost per category and sums to ``billed_cost``. Rows no rule
    recognises are in ``other`` and also counted in ``uncategorized_rows``/``_cost`` so they are
    visible, not hidden. ``gpu_compute_cost`` is the billed cost of GPU instance usage plus the
    share of commitment fees (Savings Plan/RI) that paid for GPU usage: each commitment's fees
    in proportion to the list cost of the usage that commitment covered (fees of a commitment
    with no covered usage on the bill: by all committed usage); ``hidden_multiplier`` is
    ``billed_cost / gpu_compute_cost`` (``None`` without GPU compute).
    """

    format: str
    engine: str
    files: tuple[str, ...]
    rows: int
    currency: str
    billed_cost: float
    effective_cost: float
    list_cost: float
    by_category: Mapping[str, float]
    rows_by_category: Mapping[str, int]
    effective_by_category: Mapping[str, float]
    compute_by_option: Mapping[str, float]
    gpu_compute_cost: float
    gpu_instance_hours: float
    uncategorized_rows: int
    uncategorized_cost: float
    period_start: str | None
    period_end: str | None
    top_lines: tuple[BillLine, ...] = ()
    breakdown_by: str | None = None
    breakdown: tuple[BreakdownRow, ...] = field(default_factory=tuple)
    #: BilledCost per payer (CUR ``bill_payer_account_id``; FOCUS ``BillingAccountId``): a
    #: folder holding two payers' exports, or a multi-cloud FOCUS file, is summed and each
    #: payer's part shown, never silently merged. Empty when the files lack the column.
    by_payer: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: Rows per provider (FOCUS ``ServiceProviderName``, else ``ProviderName``; CUR: AWS), so
    #: that ``compare`` can tell a bill of another cloud from the plan's. Empty without it.
    by_provider: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: Rows whose mandatory cost (FOCUS BilledCost, EffectiveCost or ListCost; CUR
    #: ``line_item_unblended_cost``) is empty: counted as 0, which a total alone cannot show.
    null_cost_rows: int = 0
    #: What the reader noticed without refusing the bill (``null_cost_rows``), one line each.
    warnings: tuple[str, ...] = ()
    #: The rows read (``--where``/``--since``/``--until``); None: every row of the files.
    where: BillFilter | None = None

    @property
    def hidden_multiplier(self) -> float | None:
        """Total bill over GPU-instance compute: how much the GPUs' sticker price understates."""
        if self.gpu_compute_cost <= 0:
            return None
        return self.billed_cost / self.gpu_compute_cost

    def lines_for(self, category: str, basis: str = "billed") -> tuple[BillLine, ...]:
        """The largest lines of one category on ``basis``, largest absolute cost first."""
        mine = [line for line in self.top_lines if line.category == category]
        mine.sort(key=lambda line: (-abs(line.cost(basis)), line.service, line.item))
        return tuple(mine[:_TOP_LINES])

    def as_dict(self) -> dict[str, Any]:
        """The JSON contract of ``trainbill bill summary --json``."""
        out: dict[str, Any] = {
            "format": self.format,
            "engine": self.engine,
            "files": list(self.files),
            "rows": self.rows,
            "currency": self.currency,
            "period_start": self.period_start,
            "period_end": self.period_end,
            "billed_cost": self.billed_cost,
            "effective_cost": self.effective_cost,
            "list_cost": self.list_cost,
            "by_category": dict(self.by_category),
            "rows_by_category": dict(self.rows_by_category),
            "compute_by_purchase_option": dict(self.compute_by_option),
            "gpu_compute_cost": self.gpu_compute_cost,
            "gpu_instance_hours": self.gpu_instance_hours,
            "uncategorized": {"rows": self.uncategorized_rows, "cost": self.uncategorized_cost},
            "hidden_multiplier": self.hidden_multiplier,
            "by_payer": dict(self.by_payer),
            "by_provider": dict(self.by_provider),
            "null_cost_rows": self.null_cost_rows,
            "warnings": list(self.warnings),
            "top_lines": [
                {
                    "category": x.category,
                    "service": x.service,
                    "item": x.item,
                    "rows": x.rows,
                    "billed_cost": x.billed_cost,
                    "effective_cost": x.effective_cost,
                }
                for x in self.top_lines
            ],
        }
        if self.where is not None:
            out["where"] = self.where.as_dict()
        if self.breakdown_by is not None:
            out["by"] = self.breakdown_by
            out["breakdown"] = [
                {
                    "key": r.key,
                    "rows": r.rows,
                    "billed_cost": r.billed_cost,
                    "effective_cost": r.effective_cost,
                    "by_category": dict(r.by_category),
                }
                for r in self.breakdown
            ]
        return out


def _parse_by(by: str | None) -> tuple[str | None, str | None]:
    """(breakdown kind, tag key) from ``--by``; raises on anything else."""
    if by is None:
        return None, None
    if by.startswith("tag:") and by[4:].strip():
        return "tag", by[4:].strip()
    if by in ("resource", "service", "day"):
        return by, None
    if by.startswith("tag:"):
        raise BillError(f"--by {by!r}: the tag key is empty; use tag:KEY, e.g. tag:project")
    raise BillError(f"--by {by!r} is not supported; allowed: {', '.join(BY_CHOICES)}")


def _d(value: Any) -> Decimal:
    if value is None:
        return Decimal(0)
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _sum(values: Iterable[Any]) -> Decimal:
    total = Decimal(0)
    for v in values:
        total = _CTX.add(total, _d(v))
    return total


_BAD_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "focus": {
        "bad_billed": ("BilledCost",),
        "bad_effective": ("EffectiveCost",),
        "bad_list": ("ListCost",),
        "bad_quantity": ("ConsumedQuantity", "PricingQuantity"),
    },
    "cur": {
        "bad_billed": ("line_item_unblended_cost",),
        "bad_effective": ("savings_plan_savings_plan_effective_cost", "reservation_effective_cost"),
        "bad_list": ("pricing_public_on_demand_cost",),
        "bad_quantity": ("line_item_usage_amount",),
    },
}
_CURRENCY_COLUMN = {"focus": "BillingCurrency", "cur": "line_item_currency_code"}


def _refuse_two(
    field: str,
    column: str,
    what: str,
    groups: Sequence[Mapping[str, Any]],
    fmt: BillFormat,
    fix: str,
) -> dict[str, int]:
    """Rows per value of ``field``; refuses a bill with two values (amounts in two currencies
    cannot be summed into one total), naming the first row that differs from the majority."""
    per_value: dict[str, int] = defaultdict(int)
    for g in groups:
        if g.get(field) is not None:
            per_value[g[field]] += int(g["rows"])
    if len(per_value) > 1:
        main = max(per_value, key=lambda c: (per_value[c], c))
        spelled = fmt.col(column)
        hit = find_other_value(fmt.files, spelled, main)
        where = f"{hit[0]}: row {hit[1]}: " if hit else ""
        found = ", ".join(f"{c} ({n} rows)" for c, n in sorted(per_value.items()))
        raise BillError(f"{where}column {spelled}: mixed {what} in one bill ({found}); {fix}")
    return per_value


def _check(groups: Sequence[Mapping[str, Any]], fmt: BillFormat) -> str:
    """Refuse non-numeric costs and mixed currencies, naming file, row and column."""
    for flag, columns in _BAD_COLUMNS[fmt.family].items():
        count = sum(int(g[flag] or 0) for g in groups)
        if not count:
            continue
        is_money = flag != "bad_quantity"
        rule = (
            "costs must be plain decimal numbers (like 1234.56 or 1.5E-7: no currency sign, "
            "thousands separator or underscore), finite and within ±9e9 (summed exactly)"
            if is_money
            else "quantities must be plain decimal numbers (like 720 or 1.5E-7), finite"
        )
        for column in columns:
            if not fmt.has(column):
                continue
            hit = find_bad_number(
                fmt.files, fmt.col(column), limit=MAX_AMOUNT if is_money else None
            )
            if hit is not None:
                path, row, value, wrong = hit
                raise BillError(
                    f"{path}: row {row}: column {fmt.col(column)}: {value!r} {wrong} "
                    f"({count} such row(s) in the bill); {rule}"
                )
        files = ", ".join(f.location for f in fmt.files)
        raise BillError(f"{files}: {count} row(s) have an invalid {' or '.join(columns)}; {rule}")
    per_currency = _refuse_two(
        "currency", _CURRENCY_COLUMN[fmt.family], "currencies", groups, fmt,
        "split the bill by currency and read each part separately",
    )  # fmt: skip
    return next(iter(per_currency), "")


def _add(totals: dict[Any, Any], key: Any, value: Decimal) -> None:
    totals[key] = _CTX.add(totals[key], value)


@dataclass(slots=True)
class _Totals:
    """Exact running totals over the engine's groups, everything ``_summarise`` reports."""

    by_cat: dict[str, Decimal] = field(
        default_factory=lambda: dict.fromkeys(BILL_CATEGORIES, Decimal(0))
    )
    eff_cat: dict[str, Decimal] = field(
        default_factory=lambda: dict.fromkeys(BILL_CATEGORIES, Decimal(0))
    )
    rows_cat: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BILL_CATEGORIES, 0))
    option: dict[str, Decimal] = field(
        default_factory=lambda: dict.fromkeys(PURCHASE_OPTIONS, Decimal(0))
    )
    lines: dict[tuple[str, str, str], list[Any]] = field(
        default_factory=lambda: defaultdict(lambda: [0, Decimal(0), Decimal(0)])
    )
    gpu_usage: Decimal = Decimal(0)
    # Per commitment (Savings Plan / RI id; None when the row names none): its fees and the list
    # cost of the compute usage it covered, all of it and the GPU part.
    fees: dict[Any, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    committed_list: dict[Any, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    gpu_committed_list: dict[Any, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    gpu_hours: Decimal = Decimal(0)
    uncat_rows: int = 0
    uncat_cost: Decimal = Decimal(0)
    payers: dict[str, Decimal] = field(default_factory=lambda: defaultdict(Decimal))
    providers: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    no_cost: int = 0
    starts: list[str] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)

    def add(self, g: Mapping[str, Any]) -> None:
        """Count one group in every total it belongs to."""
        cat, billed, effective = g["category"], _d(g["billed"]), _d(g["effective"])
        _add(self.by_cat, cat, billed)
        _add(self.eff_cat, cat, effective)
        self.rows_cat[cat] += int(g["rows"])
        if g["option"] is not None:
            _add(self.option, g["option"], billed)
        self._commitment(g, cat, billed)
        if g["gpu"]:
            self.gpu_usage = _CTX.add(self.gpu_usage, billed)
            self.gpu_hours = _CTX.add(self.gpu_hours, _d(g["gpu_hours"]))
        if g.get("payer") is not None:
            _add(self.payers, g["payer"], billed)
        self.no_cost += int(g["no_cost"] or 0)
        if g.get("provider") is not None:
            self.providers[g["provider"]] += int(g["rows"])
        if g["uncat"]:
            self.uncat_rows += int(g["rows"])
            self.uncat_cost = _CTX.add(self.uncat_cost, billed)
        self.starts.extend([g["pmin"]] if g["pmin"] else [])
        self.ends.extend([g["pmax"]] if g["pmax"] else [])
        line = self.lines[(cat, g["service"] or _NONE, g["label"] or _NONE)]
        line[0] += int(g["rows"])
        line[1] = _CTX.add(line[1], billed)
        line[2] = _CTX.add(line[2], effective)

    def _commitment(self, g: Mapping[str, Any], cat: str, billed: Decimal) -> None:
        cid = g.get("commit_id")
        if g["fee"]:
            _add(self.fees, cid, billed)
        elif cat == "compute" and g["option"] == "committed" and not g["negation"]:
            _add(self.committed_list, cid, _d(g["list"]))
            if g["gpu"]:
                _add(self.gpu_committed_list, cid, _d(g["list"]))


def _top_lines(lines: Mapping[tuple[str, str, str], list[Any]]) -> list[BillLine]:
    """Per category, the largest lines by billed and by effective cost: Savings-Plan-covered
    usage bills 0 in FOCUS but is the bulk of the amortised (effective) cost a comparison may
    be on."""
    top: list[BillLine] = []
    for cat in BILL_CATEGORIES:
        chosen: dict[tuple[str, str, str], list[Any]] = {}
        for col in (1, 2):
            for k, v in sorted(
                ((k, v) for k, v in lines.items() if k[0] == cat),
                key=lambda kv, c=col: (-abs(kv[1][c]), kv[0]),  # type: ignore[misc]
            )[:_TOP_LINES]:
                chosen[k] = v
        top.extend(
            BillLine(
                category=k[0],
                service=k[1],
                item=k[2],
                rows=v[0],
                billed_cost=float(v[1]),
                effective_cost=float(v[2]),
            )
            for k, v in sorted(chosen.items(), key=lambda kv: (-abs(kv[1][1]), kv[0]))
        )
    return top


def _floats(totals: Mapping[str, Decimal]) -> Mapping[str, float]:
    return MappingProxyType({k: float(v) for k, v in totals.items()})


def _summarise(groups: Sequence[Mapping[str, Any]], fmt: BillFormat, engine: str) -> dict[str, Any]:
    currency = _check(groups, fmt)
    t = _Totals()
    for g in groups:
        t.add(g)
    fee_share = _gpu_fee_share(t.fees, t.committed_list, t.gpu_committed_list)
    gpu_compute = _CTX.add(t.gpu_usage, fee_share)
    return {
        "format": fmt.name,
        "engine": engine,
        "files": tuple(f.location for f in fmt.files),
        "rows": sum(t.rows_cat.values()),
        "currency": currency,
        "billed_cost": float(_sum(t.by_cat.values())),
        "effective_cost": float(_sum(t.eff_cat.values())),
        "list_cost": float(_sum(g["list"] for g in groups)),
        "by_category": _floats(t.by_cat),
        "rows_by_category": MappingProxyType(t.rows_cat),
        "effective_by_category": _floats(t.eff_cat),
        "compute_by_option": _floats(t.option),
        "gpu_compute_cost": float(gpu_compute),
        # Summed as doubles (engine order differs in the last bits): 6 decimals, micro-hours.
        "gpu_instance_hours": round(float(t.gpu_hours), 6),
        "uncategorized_rows": t.uncat_rows,
        "uncategorized_cost": float(t.uncat_cost),
        "by_payer": MappingProxyType({k: float(t.payers[k]) for k in sorted(t.payers)}),
        "by_provider": MappingProxyType({k: t.providers[k] for k in sorted(t.providers)}),
        "null_cost_rows": t.no_cost,
        "warnings": _reader_warnings(t, fmt, gpu_compute),
        "period_start": min(t.starts) if t.starts else None,
        "period_end": max(t.ends) if t.ends else None,
        "top_lines": tuple(_top_lines(t.lines)),
    }


_MANDATORY_COST = {
    "focus": ("BilledCost", "EffectiveCost", "ListCost"),
    "cur": ("line_item_unblended_cost",),
}


def _reader_warnings(t: _Totals, fmt: BillFormat, gpu_compute: Decimal) -> tuple[str, ...]:
    """What the totals cannot show: rows counted as 0 because a mandatory cost is empty (a
    FOCUS export must fill them, so an empty one is a broken export or a dropped value), and
    GPU compute without instance-hours (Google Cloud's per-GPU and per-vCPU SKUs), which a
    calibration per GPU node-hour cannot use."""
    files = ", ".join(f.location for f in fmt.files)
    out = []
    if t.no_cost:
        names = " or ".join(fmt.col(c) for c in _MANDATORY_COST[fmt.family] if fmt.has(c))
        out.append(
            f"{files}: {t.no_cost:,} row(s) have an empty {names}, counted as 0 in the totals"
        )
    if gpu_compute and not t.gpu_hours:
        out.append(
            f"{files}: GPU compute with no GPU instance-hours: its rows are billed per GPU-hour "
            "and per vCPU- or GB-hour (Google Cloud's GPU and accelerator-machine SKUs), not per "
            "instance, so instance-hours cannot be read from this bill"
        )
    return tuple(out)


def _gpu_fee_share(
    fees: Mapping[Any, Decimal],
    committed_list: Mapping[Any, Decimal],
    gpu_committed_list: Mapping[Any, Decimal],
) -> Decimal:
    """The part of the commitment fees that paid for GPU usage.

    Each commitment's fee is split by the list cost of the compute usage *that* commitment
    covered (a Savings Plan covering only p5 hours is all GPU, an RI on m5 hosts none of it).
    Pooling every fee against every covered row instead let a large non-GPU RI's fee inflate
    GPU compute. A fee whose commitment covered nothing on the bill, or names none, is split
    by the pooled list cost of all committed usage.
    """
    all_list = _sum(committed_list.values())
    pooled = _CTX.divide(_sum(gpu_committed_list.values()), all_list) if all_list else Decimal(0)
    total = Decimal(0)
    for cid, fee in fees.items():
        covered = committed_list.get(cid, Decimal(0)) if cid is not None else Decimal(0)
        share = _CTX.divide(gpu_committed_list.get(cid, Decimal(0)), covered) if covered else pooled
        total = _CTX.add(total, _CTX.multiply(fee, share))
    return total


_MONEY_KEYS = ("billed", "effective", "list")


def _rows(columns: Sequence[str], records: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
    """Result rows as dicts, money turned from integer pico-units (``_expr.pico_total``) into
    exact ``Decimal``."""
    out: list[dict[str, Any]] = []
    for values in records:
        row = dict(zip(columns, values, strict=True))
        for k in _MONEY_KEYS:
            v = row.get(k)
            if v is not None:
                row[k] = Decimal(v).scaleb(-12, _CTX)
        out.append(row)
    return out


def _fetch(expr: Any) -> list[dict[str, Any]]:
    """Run an Ibis expression (Spark) and return its rows as dicts."""
    table = expr.to_pyarrow()
    return _rows(table.column_names, (r.values() for r in table.to_pylist()))


def _summary_expr(c: Any) -> Any:
    """One aggregate over the classified groups: everything ``_summarise`` needs."""
    import ibis

    label = ibis.coalesce(c.usage_type, c.desc, c.service)
    keys = [
        "currency",
        "payer",
        "provider",
        "category",
        "option",
        "gpu",
        "fee",
        "negation",
        "uncat",
        "service",
        "commit_id",
    ]
    m = c.mutate(label=label)
    return m.group_by([*keys, "label"]).aggregate(
        rows=m.rows.sum(),
        billed=m.billed.sum(),
        effective=m.effective.sum(),
        list=m.list.sum(),
        gpu_hours=m.gpu_hours.sum(),
        bad_billed=m.bad_billed.sum(),
        bad_effective=m.bad_effective.sum(),
        bad_list=m.bad_list.sum(),
        bad_quantity=m.bad_quantity.sum(),
        no_cost=m.no_cost.sum(),
        pmin=m.period_start.min(),
        pmax=m.period_end.max(),
    )


def _breakdown_expr(c: Any) -> Any:
    return c.group_by(["key", "category"]).aggregate(
        rows=c.rows.sum(), billed=c.billed.sum(), effective=c.effective.sum()
    )


def _breakdown(groups: Iterable[Mapping[str, Any]]) -> tuple[BreakdownRow, ...]:
    acc: dict[str, list[Any]] = {}
    for g in groups:
        k = g["key"] if g["key"] is not None else _NONE
        entry = acc.setdefault(k, [0, Decimal(0), Decimal(0), {}])
        entry[0] += int(g["rows"])
        entry[1] = _CTX.add(entry[1], _d(g["billed"]))
        entry[2] = _CTX.add(entry[2], _d(g["effective"]))
        entry[3][g["category"]] = _CTX.add(entry[3].get(g["category"], Decimal(0)), _d(g["billed"]))
    rows = [
        BreakdownRow(
            key=k,
            rows=v[0],
            billed_cost=float(v[1]),
            effective_cost=float(v[2]),
            by_category=MappingProxyType(
                {cat: float(v[3][cat]) for cat in BILL_CATEGORIES if cat in v[3]}
            ),
        )
        for k, v in acc.items()
    ]
    rows.sort(key=lambda r: (-abs(r.billed_cost), r.key))
    return tuple(rows)


def read_bill(
    paths: str | Path | Sequence[str | Path],
    *,
    engine: str = "duckdb",
    by: str | None = None,
    progress: bool = False,
    where: BillFilter | None = None,
) -> BillSummary:
    """Read FOCUS 1.0-1.2 or AWS CUR 2.0 files (CSV, CSV.gz, Parquet) into a ``BillSummary``.

    Args:
        paths: files, folders, or a CUR 2.0 Data Export folder with its ``*-Manifest.json``;
            for ``engine="trino"``/``"athena"``, table names (``schema.table``).
        engine: ``"duckdb"`` (embedded, default), ``"spark"`` (PySpark), ``"trino"`` or
            ``"athena"`` (the same queries; see ``trainbill.bills._engine``).
        by: optional breakdown: ``"tag:KEY"``, ``"resource"``, ``"service"`` or ``"day"``.
        progress: show a Rich progress bar on stderr while DuckDB reads (the CLI's default
            for tables; off with ``--quiet`` and with ``--json``).
        where: read only the rows a ``filters.BillFilter`` keeps (tags, charge days),
            filtered inside the engine before anything is summed.

    Raises:
        UnsupportedBillError: unknown format (the message lists the expected columns) or
            missing required columns.
        BillError: unreadable files, non-numeric costs or mixed currencies (naming file, row
            and column), an unknown engine or ``by`` value.
    """
    kind, tag_key = _parse_by(by)
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if engine not in ENGINES:  # before reading any file: the engine decides what the inputs are
        raise BillError(f"unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")
    remote = [u for i in items if (u := remote_uri(i)) is not None]
    if remote and engine != "spark":
        raise BillError(
            f"{remote[0]}: S3 files are read by --engine spark (as s3a://); DuckDB reads local "
            "files (copy them down), Trino/Athena the lake table over them"
        )
    if engine in TABLE_ENGINES and not items:
        raise BillError(f"no tables given; engine {engine!r} reads bill tables by name")
    # Trino/Athena tables and S3 files are described by the engine, once it is open (``_run``).
    fmt = None if engine in TABLE_ENGINES or remote else detect(discover(items))
    # Ibis 12 calls DuckDB 2's deprecated ``fetch_arrow_table``; the warning concerns Ibis's
    # internals, not ours, so it is silenced for the engine calls only.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"fetch_arrow_table\(\) is deprecated")
        # PySpark 4.0 sets a pandas option pandas 3 deprecates, and py4j leaves sockets to GC.
        warnings.filterwarnings("ignore", message=r"The 'future\.infer_string' option")
        warnings.filterwarnings("ignore", category=ResourceWarning)
        return _run(
            fmt, [str(i) for i in items], engine, kind, tag_key, by, progress, where or _ALL
        )


def _queries(
    eng: Any,
    fmt: BillFormat,
    kind: str | None,
    tag_key: str | None,
    *,
    where: BillFilter = _ALL,
    staged: bool = False,
    on_scan: Callable[[str, Any], None] | None = None,
    share: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """The Ibis expressions of one read: the summary and, with ``--by``, the breakdown.

    ``staged`` (DuckDB): the read is cut into steps that each store their result in a temp
    table, read by the next step through an unbound table of that name; such entries are
    named ``scan:NAME`` (the grouped rows, ``Engine.groups``: the scan of the files, placed
    first) and ``table:NAME`` (the normalised groups). Why: a first run can start the scan,
    compiled from a small expression, while Ibis compiles the rest (``_query_duckdb``); and
    DuckDB plans the classification of a few thousand groups in ~10 ms instead of ~90 ms
    when it does not inline the normalising expressions into the classifying ones.
    ``on_scan(name, expr)`` is called with each scan as soon as it is built, before the rest.
    """
    import ibis

    from trainbill.bills import cur, focus

    mapping = focus if fmt.family == "focus" else cur
    out: dict[str, Any] = {}

    def stage(prefix: str) -> Any:
        def store(table: Any) -> Any:
            name = f"trainbill_step_{len(out)}"
            out[prefix + name] = table
            if prefix == _SCAN and on_scan is not None:
                on_scan(prefix + name, table)
            return ibis.table(table.schema(), name=name)

        return store

    def classified(key: str | None, tag: str | None) -> Any:
        if not staged:
            return classify(eng.normalized(fmt, mapping, key=key, tag_key=tag, where=where))
        n = eng.normalized(fmt, mapping, key=key, tag_key=tag, where=where, stage=stage(_SCAN))
        return classify(stage(_TABLE)(n))

    # With a breakdown, the summary is the breakdown's groups added up: one scan of the files
    # instead of two (a 2 M-row gzip CSV: 10.6 s -> about 5 s). Exact either way: every group's
    # money is an exact integer (``_expr.pico_total``) and the key only splits groups further.
    c = classified(kind, tag_key)
    if kind is not None and share is not None:  # read by two queries: computed once (Spark)
        c = share(c)
    out["summary"] = _summary_expr(c)
    if kind is not None:
        out["breakdown"] = _breakdown_expr(c)
    return out


#: Prefixes of ``_queries`` entries whose result is stored as a temp table, not returned: the
#: scan of the files, and a later step.
_SCAN = "scan:"
_TABLE = "table:"


def _run(
    fmt: BillFormat | None,
    names: list[str],
    engine: str,
    kind: str | None,
    tag_key: str | None,
    by: str | None,
    progress: bool = False,
    where: BillFilter | None = None,
) -> BillSummary:
    """Open the engine, run the queries, reduce the groups; ``fmt`` is None for table engines."""
    where = where or _ALL
    eng = open_engine(engine)
    try:
        if fmt is None:
            fmt = detect(_engine_files(eng, names))
        if eng.name == "duckdb":
            results = _run_duckdb(eng, fmt, kind, tag_key, where, progress)
        else:
            cached: list[Any] = []

            def share(table: Any) -> Any:
                # Spark recomputes a table for every query that reads it; cached, the summary
                # and the breakdown share one scan of the files (DuckDB stores the step itself).
                cached.append(table.cache())
                return cached[-1]

            try:
                queries = _queries(
                    eng,
                    fmt,
                    kind,
                    tag_key,
                    where=where,
                    share=share if eng.name == "spark" else None,
                )
                results = {name: _fetch(q) for name, q in queries.items()}
            except TrainbillError:
                raise
            except Exception as exc:  # noqa: BLE001 - Spark/Trino/Athena errors vary by version
                raise BillError(_engine_message(exc, fmt, eng.name)) from None
            finally:
                for table in cached:
                    table.release()
    finally:
        eng.close()
    fields = _summarise(results["summary"], fmt, engine)
    breakdown = _breakdown(results["breakdown"]) if "breakdown" in results else ()
    return BillSummary(
        **fields,
        breakdown_by=by,
        breakdown=breakdown,
        where=None if where.empty else where,
    )


#: An engine's error class in its message: Spark's ``[MALFORMED_CSV_RECORD] Malformed CSV
#: record: …``, Trino's ``INVALID_CAST_ARGUMENT``-style names are found the same way.
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z0-9_.]+\][^\n]*")
#: Longest engine detail quoted in an error line (a malformed record can be a whole row).
_MAX_DETAIL = 300


def _engine_message(exc: Exception, fmt: BillFormat, engine: str) -> str:
    """One line from a Spark, Trino or Athena failure at run time (a malformed CSV row under
    ``FAILFAST``, a file gone from S3): the engine's own error class and message where it
    gives one, else its first line, with the files read. A JVM error arrives as dozens of
    lines of stack; the user needs the first sentence and which bill."""
    text = str(exc).strip()
    # The last error class is the root cause: a JVM error lists its causes outermost first
    # (``[FAILED_READ_FILE.NO_HINT]`` … caused by ``[MALFORMED_CSV_RECORD] Malformed CSV
    # record: "x","y"``).
    found = _ERROR_CLASS.findall(text)
    detail = found[-1].strip() if found else (text.splitlines() or [type(exc).__name__])[0]
    if len(detail) > _MAX_DETAIL:
        detail = detail[: _MAX_DETAIL - 1] + "…"
    names = ", ".join(f.location for f in fmt.files)
    return f"{names}: {engine} could not read the bill: {detail}"


def _engine_files(eng: Any, names: list[str]) -> tuple[BillFile, ...]:
    """The bill's files as the open engine sees them: Trino/Athena tables by name; for Spark,
    local files (found and read here) and ``s3://``/``s3a://`` ones (described by Spark)."""
    if eng.name in TABLE_ENGINES:
        return tuple(eng.table_files(names))
    local = [n for n in names if remote_uri(n) is None]
    remote = [u for n in names if (u := remote_uri(n)) is not None]
    return (*(discover(local) if local else ()), *eng.remote_files(remote))


def _run_duckdb(
    eng: Any,
    fmt: BillFormat,
    kind: str | None,
    tag_key: str | None,
    where: BillFilter,
    progress: bool = False,
) -> dict[str, list[dict[str, Any]]]:
    """Register the files, get the SQL (cached per schema, else compiled by Ibis), run it."""
    import duckdb

    try:
        return _query_duckdb(eng, fmt, kind, tag_key, where, progress)
    except duckdb.Error as exc:
        # Unreadable files, malformed CSV, a non-finite or out-of-range double: a message
        # naming the files, never a traceback.
        raise BillError(_duckdb_message(exc, fmt)) from None


def _named_file(lines: Sequence[str], fmt: BillFormat) -> str:
    """The one bill file a DuckDB error names (a CSV error's ``file = …`` line; an IO error's
    quoted path, as when a part is cut short or removed mid-read), else all the files."""
    for line in lines[1:]:
        stripped = line.strip()
        if stripped.startswith("file = "):
            return stripped.removeprefix("file = ")
    quoted = [f.location for f in fmt.files if f'"{f.location}"' in lines[0]]
    if len(quoted) == 1:
        return quoted[0]
    # A gzip error ends with the path, unquoted ("Unexpected end of GZIP stream: a.csv.gz").
    ending = [f.location for f in fmt.files if lines[0].endswith(f": {f.location}")]
    if len(ending) == 1:
        return ending[0]
    return ", ".join(f.location for f in fmt.files)


def _duckdb_message(exc: Exception, fmt: BillFormat) -> str:
    """One line from a DuckDB error: its first line, the reason a CSV error gives further down
    ("… This file is not utf-8 encoded.") and the one file it names, else all the files; never
    the SQL DuckDB quotes (``LINE 1: CREATE … read_csv(…``), which says nothing about the bill.
    """
    lines = [x.rstrip() for x in str(exc).strip().splitlines()]
    if not lines or not lines[0]:
        lines = [type(exc).__name__]
    detail = lines[0]
    names = _named_file(lines, fmt)
    if "gzip" in detail.lower():  # DuckDB reads a .csv.gz while it runs (and sniffs) the SQL
        # The file named already ends the detail ("…GZIP stream: a.csv.gz"): not twice.
        detail = detail.removesuffix(f": {names}")
        return f"{names}: truncated or corrupt gzip ({detail}); download the file again"
    if any("not utf-8 encoded" in line.lower() for line in lines):
        where = detail.removeprefix("Invalid Input Error: CSV Error on ")
        return f"{names}: {where}: not UTF-8 text; export or save the bill as UTF-8"
    skipped = ("Original Line", "Possible Solution", "LINE ")
    raw_row = False
    for line in lines[1:]:
        # "Original Line:" with nothing after it puts the raw row on the next line: that row
        # is the bill's content, not the reason.
        after_label = raw_row
        raw_row = line.startswith("Original Line") and not line.partition(":")[2].strip()
        if after_label or not line or line[0].isspace() or line.startswith(skipped):
            continue
        detail = f"{detail}: {line}"
        break
    return f"{names}: DuckDB could not read the bill: {detail}"


def _query_duckdb(
    eng: Any,
    fmt: BillFormat,
    kind: str | None,
    tag_key: str | None,
    where: BillFilter,
    progress: bool = False,
) -> dict[str, list[dict[str, Any]]]:
    """Run the read's SQL: cached for this schema (``_sqlcache``), else compiled by Ibis.

    On a first run the scan (the ``table:`` statements, compiled first from a small
    expression) runs in a thread while Ibis compiles the classification: DuckDB releases
    the GIL while it reads, and compiling is most of a first run's extra second.
    """
    from trainbill.bills import cur, focus
    from trainbill.bills._sqlcache import load_sql, store_sql

    views = eng.register(fmt)
    mapping = focus if fmt.family == "focus" else cur
    key = {
        "family": fmt.family,
        "columns": dict(fmt.columns),
        "views": views,
        # Parquet grouping columns proven constant leave the GROUP BY (``Engine.constants``).
        # A filtered read folds nothing (``Engine.groups``): the footers say nothing of the
        # rows the filter keeps, which may be none.
        "folded": eng.folded(fmt, mapping.DIMENSIONS) if where.empty else [],
        "by": kind,
        "tag": tag_key,
        **({} if where.empty else {"where": where.cache_key()}),
    }
    label = f"reading {len(fmt.files)} file(s)"

    def create(name: str, sql: str) -> str:
        return f"CREATE OR REPLACE TEMP TABLE {name.split(':', 1)[1]} AS {sql}"

    def scan(name: str, sql: str) -> None:
        if progress:
            _with_progress(eng.con, create(name, sql), label)
        else:
            eng.con.execute(create(name, sql))

    sqls = load_sql(key)
    if sqls is None:
        sqls = _compile_and_scan(eng, fmt, kind, tag_key, where, scan)
        store_sql(key, sqls)
    else:
        for name, sql in sqls.items():
            if name.startswith(_SCAN):
                scan(name, sql)
    results: dict[str, list[dict[str, Any]]] = {}
    for name, sql in sqls.items():
        if name.startswith(_TABLE):
            eng.con.execute(create(name, sql))
        elif not name.startswith(_SCAN):
            cursor = eng.con.execute(sql)
            results[name] = _rows([d[0] for d in cursor.description], cursor.fetchall())
    return results


def _compile_and_scan(
    eng: Any,
    fmt: BillFormat,
    kind: str | None,
    tag_key: str | None,
    where: BillFilter,
    scan: Callable[[str, str], None],
) -> dict[str, str]:
    """Compile the read's SQL with Ibis, running each scan (``scan``) in a thread as soon as
    it is compiled, while the rest compiles; returns every statement by name."""
    compiler = _duckdb_compiler()

    def to_sql(expr: Any) -> str:
        # ``ibis.to_sql`` would also unbind the tables (already unbound) and pretty-print.
        return str(compiler.to_sqlglot(expr).sql(dialect=compiler.dialect))

    compiled: dict[str, str] = {}
    worker = _Worker(scan)

    def start(name: str, expr: Any) -> None:
        compiled[name] = to_sql(expr)
        worker.submit(name, compiled[name])

    try:
        queries = _queries(eng, fmt, kind, tag_key, where=where, staged=True, on_scan=start)
        compiled.update({n: to_sql(q) for n, q in queries.items() if n not in compiled})
    except BaseException:
        worker.cancel(eng.con)
        raise
    worker.join()
    return compiled


_COMPILERS = "ibis.backends.sql.compilers"


def _duckdb_compiler() -> Any:
    """Ibis's DuckDB SQL compiler, imported without the other 19 dialects' compilers.

    Why: the package ``ibis.backends.sql.compilers`` imports every dialect's compiler in its
    ``__init__``, ~0.1 s of a first run (a tenth of it) for dialects a DuckDB read never uses.
    A bare package module stands in for it while its ``duckdb`` module is imported; then the
    stand-in and the modules imported under it are removed from ``sys.modules``, so a later
    import of the package (Spark, Trino, ``ibis.to_sql``) runs its ``__init__`` as usual. If
    anything about this fails (another Ibis layout), the package is imported normally.
    """
    import importlib
    import sys
    import types

    if _COMPILERS not in sys.modules:
        import ibis.backends.sql as sql_package

        stand_in = types.ModuleType(_COMPILERS)
        stand_in.__path__ = [str(Path(sql_package.__path__[0]) / "compilers")]
        before = set(sys.modules)
        sys.modules[_COMPILERS] = stand_in
        try:
            return importlib.import_module(_COMPILERS + ".duckdb").compiler
        except Exception:  # noqa: BLE001, S110 - any failure: the normal import below
            pass
        finally:
            for name in set(sys.modules) - before:
                if name == _COMPILERS or name.startswith(_COMPILERS + "."):
                    del sys.modules[name]
    from ibis.backends.sql.compilers.duckdb import compiler

    return compiler


class _Worker:
    """Runs ``fn(name, sql)`` for each submitted statement, in order, in one thread (started
    on the first); ``join`` waits for the last and re-raises the first error in the caller."""

    def __init__(self, fn: Callable[[str, str], None]) -> None:
        import queue

        self._fn = fn
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self._thread: Any = None
        self._error: BaseException | None = None
        self._cancelled = False

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None and not self._cancelled:
                try:
                    self._fn(*item)
                except BaseException as exc:  # noqa: BLE001 - re-raised by join()
                    self._error = exc

    def submit(self, name: str, sql: str) -> None:
        if self._thread is None:
            import threading

            self._thread = threading.Thread(target=self._run, name="trainbill-scan")
            self._thread.start()
        self._queue.put((name, sql))

    def join(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            raise self._error

    def cancel(self, con: Any) -> None:
        """Interrupt the running statement (the caller is failing) and wait for the thread."""
        if self._thread is not None:
            self._cancelled = True  # what is still queued is skipped
            con.interrupt()
            self._queue.put(None)
            self._thread.join()


#: Seconds between polls of DuckDB's progress; a bill under this is done before any bar shows.
_PROGRESS_POLL_S = 0.2


def _with_progress(con: Any, sql: str, label: str) -> tuple[list[str], list[Any]]:
    """Run ``sql`` on ``con`` while a thread polls ``query_progress`` into a Rich bar on stderr.

    The bar is transient (gone when the read ends) and drawn only on a terminal, so piped
    output and logs stay clean. DuckDB reports progress per pipeline; the percentage is of the
    scan, which is nearly all of a large bill's time.
    """
    import threading

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    # DuckDB tracks progress only with its bar on; it must never print the bar itself.
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    done = threading.Event()
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(label, total=100)

    def poll() -> None:
        shown = False
        while not done.wait(_PROGRESS_POLL_S):
            pct = con.query_progress()
            if pct is None or pct < 0:
                continue
            if not shown:
                bar.start()
                shown = True
            bar.update(task, completed=min(float(pct), 100.0))
        if shown:
            bar.stop()

    thread = threading.Thread(target=poll, name="trainbill-progress", daemon=True)
    thread.start()
    try:
        cursor = con.execute(sql)
        return [d[0] for d in cursor.description], cursor.fetchall()
    finally:
        done.set()
        thread.join()
