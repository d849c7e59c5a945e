"""Which rows of a bill to read: ``--where tag:KEY=VALUE``, ``--since`` and ``--until``.

One account's export holds every workload of the account; a run, a team or a month is picked
out by its tags and dates. The filter is a value (``BillFilter``) that every reader of bills
takes (``read_bill(..., where=...)``), and ``focus.row_filter`` / ``cur.row_filter`` turn it
into one Ibis predicate applied to the rows before they are grouped, so it runs inside the
engine (DuckDB, Spark, Trino, Athena alike) and nothing outside the filter is summed.
``trainbill runs close`` reads a run's rows with the same filter (the tag
``trainbill-run=<id>``): one implementation of "the rows of".

Dates compare the day a row's charge starts (FOCUS ``ChargePeriodStart``, CUR
``line_item_usage_start_date``), as ``YYYY-MM-DD`` text, which orders like the dates on every
engine: ``since`` and ``until`` are both inclusive days.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.errors import BillError

__all__ = ["BillFilter", "bill_filter", "parse_day"]

_WHERE_FORM = "tag:KEY=VALUE (e.g. tag:project=llama)"


@record
class BillFilter:
    """Rows whose tags hold every ``tags`` pair and whose charge day is in [since, until]."""

    tags: tuple[tuple[str, str], ...] = ()
    since: date | None = None
    until: date | None = None

    @property
    def empty(self) -> bool:
        """True when the filter keeps every row (so the read is the unfiltered one)."""
        return not self.tags and self.since is None and self.until is None

    def cache_key(self) -> dict[str, Any]:
        """What the compiled SQL depends on (``_sqlcache`` key)."""
        return {
            "tags": [list(t) for t in self.tags],
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
        }

    def describe(self) -> str:
        """The filter in the words of its flags, for messages."""
        parts = [f"tag {k}={v}" for k, v in self.tags]
        if self.since is not None:
            parts.append(f"from {self.since.isoformat()}")
        if self.until is not None:
            parts.append(f"until {self.until.isoformat()}")
        return ", ".join(parts) or "every row"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return self.cache_key()


def parse_day(value: str | date | None, *, flag: str) -> date | None:
    """A ``YYYY-MM-DD`` flag value as a date; one error line naming the flag otherwise."""
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise BillError(f"{flag} {value!r}: not a date; use YYYY-MM-DD") from None


def _parse_where(item: str) -> tuple[str, str]:
    if not item.startswith("tag:"):
        raise BillError(f"--where {item!r}: only tag filters are supported; use {_WHERE_FORM}")
    key, eq, value = item[4:].partition("=")
    key, value = key.strip(), value.strip()
    if not eq or not key or not value:
        raise BillError(f"--where {item!r}: give a tag key and a value; use {_WHERE_FORM}")
    if '"' in key or '"' in value:
        raise BillError(f"--where {item!r}: a tag key or value cannot hold a double quote")
    return key, value


def bill_filter(
    where: Sequence[str] = (),
    *,
    since: str | date | None = None,
    until: str | date | None = None,
    tags: Sequence[tuple[str, str]] = (),
) -> BillFilter:
    """A ``BillFilter`` from the flags' text (``where``) and/or ``tags`` pairs.

    Raises:
        BillError: a ``--where`` not of the form ``tag:KEY=VALUE``, a date that is not
            ``YYYY-MM-DD``, or ``--since`` after ``--until``.
    """
    pairs = list(dict.fromkeys([*(_parse_where(w) for w in where), *tags]))
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise BillError(
            f"--where tag:{repeated[0]} given twice with different values: no row can hold both"
        )
    start, end = parse_day(since, flag="--since"), parse_day(until, flag="--until")
    if start is not None and end is not None and start > end:
        raise BillError(f"--since {start} is after --until {end}: no day is in between")
    return BillFilter(tags=tuple(pairs), since=start, until=end)
