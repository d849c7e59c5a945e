"""The team's own factors, learned from closed runs (pure arithmetic, no I/O).

Each closed run holds its forecast (by bill category, and the model's GPU node-hours) and its
actual bill (by category, and the GPU instance-hours billed). Two kinds of factor come out:

* **hours**: achieved GPU node-hours over the model's, averaged over the runs whose bill shows
  instance-hours (a bill billed per GPU-hour, Google Cloud's, shows none and is skipped);
* **per category** (storage, networking, …): the team's overhead dollars per GPU node-hour
  over the model's, ``(Σ actual_c / Σ actual node-hours) / (Σ forecast_c / Σ forecast
  node-hours)``, over the runs whose forecast has that category.

Every factor is shrunk towards the packaged model (1) by the number of runs behind it:
``(n · f + k · 1) / (n + k)``, with ``k`` the catalog's ``history.prior_runs``: one run
barely moves the model, ten runs mostly replace it. Applied to a forecast, compute lines
scale by the hours factor, a category's lines by hours × its factor (more node-hours at the
team's rate per node-hour); every line it changes says so in its basis.

``leave_one_out`` is the honest test of the factors on the team's own history: each closed
run is predicted by the factors fitted on the others and compared with its bill, next to the
uncalibrated model's error on the same run.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from trainbill._record import record

__all__ = [
    "ClosedRun",
    "Factor",
    "HistoryCalibration",
    "LooRow",
    "apply_history",
    "fit_history",
    "leave_one_out",
]

#: Bill categories scaled by the hours factor alone (billed per instance-hour).
_HOURS_ONLY = ("compute",)
#: Bill categories never scaled: not driven by node-hours (or not forecast).
_UNSCALED = ("discount", "credit", "tax", "support", "other")


@record
class ClosedRun:
    """What the fit reads of one closed run."""

    id: str
    forecast_by_category: Mapping[str, float]
    forecast_node_hours: float
    actual_by_category: Mapping[str, float]
    actual_node_hours: float

    @property
    def forecast_total(self) -> float:
        return float(sum(self.forecast_by_category.values()))

    @property
    def actual_total(self) -> float:
        return float(sum(self.actual_by_category.values()))


@record
class Factor:
    """One team factor: the raw one, the shrunk one applied, and the runs behind it."""

    raw: float
    value: float
    runs: int

    def as_dict(self) -> dict[str, Any]:
        return {"raw": self.raw, "value": self.value, "runs": self.runs}


@record
class HistoryCalibration:
    """The team's factors (``fit_history``) and the shrinkage prior they were fitted with."""

    hours: Factor
    categories: Mapping[str, Factor]
    runs: tuple[str, ...]
    prior_runs: float

    def multiplier(self, bill_category: str) -> float:
        """What a forecast line of ``bill_category`` is multiplied by."""
        if bill_category in _UNSCALED:
            return 1.0
        f = self.categories.get(bill_category)
        return self.hours.value * (f.value if f is not None else 1.0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": list(self.runs),
            "prior_runs": self.prior_runs,
            "hours": self.hours.as_dict(),
            "categories": {k: v.as_dict() for k, v in self.categories.items()},
        }


def _shrunk(raw: float, n: int, k: float) -> float:
    return (n * raw + k * 1.0) / (n + k) if n + k > 0 else 1.0


def fit_history(runs: Sequence[ClosedRun], *, prior_runs: float) -> HistoryCalibration:
    """The team's factors from ``runs`` (none: every factor 1, the packaged model)."""
    timed = [r for r in runs if r.actual_node_hours > 0 and r.forecast_node_hours > 0]
    hours_raw = (
        statistics.fmean(r.actual_node_hours / r.forecast_node_hours for r in timed)
        if timed
        else 1.0
    )
    hours = Factor(raw=hours_raw, value=_shrunk(hours_raw, len(timed), prior_runs), runs=len(timed))
    cats: dict[str, Factor] = {}
    names = sorted({c for r in timed for c, v in r.forecast_by_category.items() if v})
    for c in names:
        if c in _HOURS_ONLY or c in _UNSCALED:
            continue
        mine = [r for r in timed if r.forecast_by_category.get(c)]
        team = sum(r.actual_by_category.get(c, 0.0) for r in mine) / sum(
            r.actual_node_hours for r in mine
        )
        model = sum(r.forecast_by_category[c] for r in mine) / sum(
            r.forecast_node_hours for r in mine
        )
        raw = team / model if model else 1.0
        cats[c] = Factor(raw=raw, value=_shrunk(raw, len(mine), prior_runs), runs=len(mine))
    return HistoryCalibration(
        hours=hours,
        categories=MappingProxyType(cats),
        runs=tuple(r.id for r in timed),
        prior_runs=prior_runs,
    )


def predict_total(run: ClosedRun, cal: HistoryCalibration) -> float:
    """The run's forecast with the factors applied, by bill category, summed."""
    return float(sum(v * cal.multiplier(c) for c, v in run.forecast_by_category.items()))


@record
class LooRow:
    """One run predicted from the others: signed errors as a share of its bill."""

    id: str
    actual_usd: float
    uncalibrated_usd: float
    calibrated_usd: float

    @property
    def uncalibrated_error(self) -> float:
        return (self.uncalibrated_usd - self.actual_usd) / self.actual_usd

    @property
    def calibrated_error(self) -> float:
        return (self.calibrated_usd - self.actual_usd) / self.actual_usd

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "actual_usd": self.actual_usd,
            "uncalibrated_usd": self.uncalibrated_usd,
            "calibrated_usd": self.calibrated_usd,
            "uncalibrated_error": self.uncalibrated_error,
            "calibrated_error": self.calibrated_error,
        }


def leave_one_out(runs: Sequence[ClosedRun], *, prior_runs: float) -> dict[str, Any]:
    """Each run with a non-zero bill predicted from the factors of the others; the median
    absolute error with and without the factors (``None`` with no such run)."""
    rows: list[LooRow] = []
    for r in runs:
        if not r.actual_total:
            continue
        others = [o for o in runs if o.id != r.id]
        cal = fit_history(others, prior_runs=prior_runs)
        rows.append(
            LooRow(
                id=r.id,
                actual_usd=r.actual_total,
                uncalibrated_usd=r.forecast_total,
                calibrated_usd=predict_total(r, cal),
            )
        )

    def median_abs(values: list[float]) -> float | None:
        return statistics.median(abs(v) for v in values) if values else None

    return {
        "runs": [x.as_dict() for x in rows],
        "median_abs_error_uncalibrated": median_abs([x.uncalibrated_error for x in rows]),
        "median_abs_error_calibrated": median_abs([x.calibrated_error for x in rows]),
    }


def apply_history(fc: Any, cal: HistoryCalibration, bill_category_of: Any) -> Any:
    """``fc`` (a ``forecast.Forecast``) with each line's quantity multiplied by its bill
    category's factor (``bill_category_of(category, service_category)``), the basis of every
    line it changes saying so, and the error band scaled with the total."""
    from trainbill.forecasting import Caution, CautionKind
    from trainbill.ledger import Ledger

    lines = []
    for line in fc.ledger.lines:
        bc = bill_category_of(line.category, line.service_category)
        m = cal.multiplier(bc)
        if m == 1.0:
            lines.append(line)
            continue
        f = cal.categories.get(bc)
        why = f"hours ×{cal.hours.value:.3f} ({cal.hours.runs} runs)"
        if f is not None:
            why += f", {bc} per node-hour ×{f.value:.3f} ({f.runs} runs)"
        lines.append(
            replace(
                line,
                quantity=line.quantity * m,
                basis=f"{line.basis}; ×{m:.3f} calibrated from run history: {why}",
            )
        )
    ledger = Ledger(lines=tuple(lines))
    ratio = ledger.total_usd / fc.ledger.total_usd if fc.ledger.total_usd else 1.0
    band = fc.band
    if band is not None:
        band = replace(
            band,
            total_usd_p10=band.total_usd_p10 * ratio,
            total_usd_p90=band.total_usd_p90 * ratio,
            gpu_hours_p10=band.gpu_hours_p10 * cal.hours.value,
            gpu_hours_p90=band.gpu_hours_p90 * cal.hours.value,
        )
    note = Caution(
        kind=CautionKind.CALIBRATION,
        text=(
            f"calibrated from run history ({len(cal.runs)} closed runs: "
            f"{', '.join(cal.runs) or 'none'}): GPU-hours ×{cal.hours.value:.3f}; "
            "the budget and actions are priced by the packaged model"
        ),
    )
    return replace(fc, ledger=ledger, band=band, cautions=(*fc.cautions, note))
