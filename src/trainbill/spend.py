"""Spend over time: the ledger laid on the calendar, by day and by calendar month.

A finance approver books a run by month, and a run that crosses a month boundary lands on two
invoices; the ledger alone (one amount per line) cannot say how it splits. This module does,
from three facts the forecast already holds: the ledger, the run's wall-clock hours and its
start day.

The rule (one place, so the report, the exports and any later page agree):

* The run starts at 00:00 UTC on its run date (``Usage.run_date``: ``[run] date`` /
  ``--run-date``, else ``[prices] as_of``). A plan names a day, not an hour, so midnight UTC is
  the stated convention, not a measurement.
* Each ledger line accrues at a constant rate over the run's wall-clock hours: nodes, volumes,
  file systems, gateways and monitoring are billed for as long as the cluster is up, and the
  expected stalls, failures and reclaims are expectations spread evenly across the run, not
  events at known times.
* One exception: a line marked ``after_run`` (a commitment bought for the run is billed every
  hour of its term, used or not: ``trainbill.costs.discount``'s unused-term line, quantity =
  unused hours) accrues hour by hour from the run's end.

Pure: no I/O, amounts stay unrounded floats (rounding is presentation's job).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

from trainbill._record import record
from trainbill.forecasting import Forecast
from trainbill.ledger import Ledger, LineItem

__all__ = ["HOURS_PER_DAY", "Period", "SpendOverTime", "spend_of", "spend_over_time"]

#: Hours in a calendar day (UTC has no daylight-saving shifts).
HOURS_PER_DAY = 24


@record
class Period:
    """Spend in one calendar day or month (UTC).

    Attributes:
        start: the period's first day (the 1st for a month).
        label: ``2025-05-01`` for a day, ``2025-05`` for a month.
        usd: what accrues in the period.
        run_hours: wall-clock hours of the run inside the period (0 for a period that only
            carries a commitment's unused term).
    """

    start: date
    label: str
    usd: float
    run_hours: float


@record
class SpendOverTime:
    """The ledger on the calendar; ``sum(days) == sum(months) == ledger total``."""

    start: datetime
    end: datetime
    days: tuple[Period, ...]
    months: tuple[Period, ...]
    basis: str


def _window(line: LineItem, wall_hours: float) -> tuple[float, float]:
    """Hours after the run's start over which ``line`` accrues (start, end)."""
    if line.after_run:  # one quantity unit per hour from the run's end
        return wall_hours, wall_hours + max(line.quantity, 0.0)
    return 0.0, wall_hours


def _overlap(a: float, b: float, lo: float, hi: float) -> float:
    return max(0.0, min(b, hi) - max(a, lo))


def _spread(windows: dict[tuple[float, float], float]) -> dict[int, float]:
    """Day index → dollars, each window's amount in proportion to its hours in each day."""
    per_day: dict[int, float] = {}
    for (a, b), usd in windows.items():
        first = math.floor(a / HOURS_PER_DAY)
        if b <= a:  # an instant: all of it on the day it falls in
            per_day[first] = per_day.get(first, 0.0) + usd
            continue
        last = max(first, math.ceil(b / HOURS_PER_DAY) - 1)
        for d in range(first, last + 1):
            share = _overlap(a, b, d * HOURS_PER_DAY, (d + 1) * HOURS_PER_DAY) / (b - a)
            per_day[d] = per_day.get(d, 0.0) + usd * share
    return per_day


def _months(days: Iterable[Period]) -> tuple[Period, ...]:
    """Days summed into calendar months, in order."""
    totals: dict[tuple[int, int], list[float]] = {}
    for p in days:
        acc = totals.setdefault((p.start.year, p.start.month), [0.0, 0.0])
        acc[0] += p.usd
        acc[1] += p.run_hours
    return tuple(
        Period(start=date(y, m, 1), label=f"{y:04d}-{m:02d}", usd=usd, run_hours=hours)
        for (y, m), (usd, hours) in totals.items()
    )


def spend_over_time(ledger: Ledger, *, start: date, wall_hours: float) -> SpendOverTime:
    """Spread ``ledger`` over the calendar from 00:00 UTC on ``start`` for ``wall_hours``.

    Every day from the start to the last day anything accrues is listed, in order; months
    are those days summed.
    """
    wall = max(float(wall_hours), 0.0)
    windows: dict[tuple[float, float], float] = {}
    for line in ledger.lines:
        w = _window(line, wall)
        windows[w] = windows.get(w, 0.0) + line.cost_usd
    per_day = _spread(windows) or {0: 0.0}
    t0 = datetime(start.year, start.month, start.day, tzinfo=UTC)
    days = tuple(
        Period(
            start=(t0 + timedelta(days=d)).date(),
            label=(t0 + timedelta(days=d)).date().isoformat(),
            usd=per_day.get(d, 0.0),
            run_hours=_overlap(0.0, wall, d * HOURS_PER_DAY, (d + 1) * HOURS_PER_DAY),
        )
        for d in range(min(per_day), max(per_day) + 1)
    )
    basis = (
        f"the run starts at 00:00 UTC on {start.isoformat()} (the run date; a plan names a day, "
        f"not an hour) and every ledger line accrues evenly over its {wall:,.1f} wall-clock hours"
    )
    if any(line.after_run for line in ledger.lines):
        basis += (
            "; a bought commitment's unused term accrues hourly after the run, to the end of its "
            "term"
        )
    return SpendOverTime(
        start=t0, end=t0 + timedelta(hours=wall), days=days, months=_months(days), basis=basis
    )


def spend_of(fc: Forecast) -> SpendOverTime:
    """A forecast's spend over time: its ledger from its run date for its wall-clock hours."""
    return spend_over_time(fc.ledger, start=fc.usage.run_date, wall_hours=fc.usage.wall_hours)
