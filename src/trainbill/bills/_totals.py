"""The exact reduction of a bill's groups: totals, reconciliation checks, GPU attribution of
commitment fees, top lines and the breakdown, in ``Decimal`` over the few thousand groups the
engine returns (``summary``'s module docstring says why), with the records they produce
(``BillLine``, ``BreakdownRow``).

Pure arithmetic on plain mappings: no engine, no files, so every engine's groups reduce alike.
"""

from __future__ import annotations

import decimal
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from trainbill._record import record
from trainbill.bills._classify import BILL_CATEGORIES, PURCHASE_OPTIONS
from trainbill.bills._files import MAX_AMOUNT, BillFormat, find_bad_number, find_other_value
from trainbill.errors import BillError

#: ``--by`` choices; ``tag:KEY`` groups by one tag's value.
BY_CHOICES: tuple[str, ...] = ("tag:KEY", "resource", "service", "day")
_TOP_LINES = 5
_NONE = "(none)"
_CTX = decimal.Context(prec=60)


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
