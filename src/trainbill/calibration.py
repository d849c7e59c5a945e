"""Calibrated forecasts: evidence (a measured step, past bills) replaces modelled assumptions.

Two kinds of calibration file feed ``trainbill forecast --calibration FILE`` (both keep their
keys in a ``[calibration]`` table whose ``kind`` says which they are):

* ``kind = "profile"`` (``trainbill profile -o``): the measured MFU of one training step
  replaces the time model's kernel efficiency when the accelerator and precision match; the
  model's layout, communication and straggler terms extrapolate it to the plan's GPU count.
* ``kind = "bills"`` (``trainbill calibrate``): overhead dollars per GPU node-hour learned
  from invoices go on the catalog (``calibrate_catalog``), and the pricing step
  ``costs.bill_rates`` replaces the modelled lines of those categories (storage, data transfer,
  networking, monitoring, orchestration — the last only when the plan uses a managed
  orchestrator) with the plan's node-hours at those rates. S3 checkpoint storage is part of a
  bill's storage, so the modelled checkpoint *storage* lines give way too (the checkpoint
  *stall* is time, which bills cannot see, and stays modelled). Being a catalog input, not an
  edit of a finished ledger, the rates reach a simulation and the planner as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trainbill._record import record
from trainbill.catalog import BillRates, Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import Caution, CautionKind, Forecast, error_band, forecast_usage
from trainbill.spec import Plan
from trainbill.timemodel import executed_share
from trainbill.usage import Usage, resolve_cluster, usage_for

__all__ = [
    "Calibrated",
    "bill_rates_of",
    "calibrate",
    "calibrate_catalog",
    "calibration_cautions",
    "forecast_calibrated",
    "measured_mfu_of",
    "parse_calibration",
    "plan_cautions",
    "read_calibration_file",
    "refuse_profiles",
]

KINDS = ("profile", "bills")


def read_calibration_file(path: Path | str) -> Any:
    """Read a calibration of either kind, validated by its own reader.

    Returns a ``trainbill.profile.Calibration`` or a ``trainbill.bills.BillCalibration``.
    """
    from trainbill._io import read_input_text

    p = Path(path)
    text = read_input_text(p, kind="calibration", what="calibration file")
    return parse_calibration(text, source=str(p))


def parse_calibration(text: str, *, source: str) -> Any:
    """A calibration of either kind from its TOML text, validated by its own reader;
    ``source`` names it in errors (a file, or where it sits in a web request).

    One parser for files and the API, so both accept and refuse exactly the same documents.
    """
    from trainbill._io import parse_toml

    doc = parse_toml(text, source=source)
    table = doc.get("calibration")
    kind = table.get("kind") if isinstance(table, dict) else None
    if kind == "profile":
        from trainbill.profile.calibration import calibration_from_document as profile_of

        return profile_of(doc, source=source)
    if kind == "bills":
        from trainbill.bills.calibrate import calibration_from_document as bills_of

        return bills_of(doc, source)
    msg = (
        f"{kind!r} is not a calibration kind; allowed values: {', '.join(KINDS)} (in a "
        "[calibration] table)"
    )
    raise SpecError(msg, source=source, field="calibration.kind")


def refuse_profiles(named: Sequence[tuple[str, Any]], *, command: str, field: str) -> None:
    """Refuse a profile calibration (measured MFU) where it would be silently unused: the
    planner and the report price other plans (instance types, node counts) that have no
    measured MFU, so only bill rates apply there. ``named`` pairs each calibration with where
    it came from (a file, ``calibrations[1]`` of a request); ``field`` is what to fix.

    Raises:
        SpecError: naming the first profile, the command, and what to give instead.
    """
    from trainbill.profile.calibration import Calibration

    profiles = [source for source, cal in named if isinstance(cal, Calibration)]
    if profiles:
        msg = (
            f"a profile calibration (measured MFU) is not used by {command}: the other plans "
            "it prices have no measured MFU; give bill calibrations (trainbill calibrate) "
            "here, and the profile to a forecast or a simulation"
        )
        raise SpecError(msg, source=profiles[0], field=field)


def bill_rates_of(cal: Any) -> BillRates:
    """A bill calibration's fitted rates as the catalog holds them."""
    return BillRates(
        usd_per_node_hour=MappingProxyType(
            {k: float(v) for k, v in cal.factors_usd_per_node_hour.items()}
        ),
        period=f"{cal.period_start or '?'} to {cal.period_end or '?'}",
        files=", ".join(cal.source_files) or "bills",
        gpu_node_hours=float(cal.gpu_node_hours),
    )


def calibrate_catalog(catalog: Catalog, calibrations: Sequence[Any]) -> Catalog:
    """The catalog with the bill calibrations' overhead rates on it (profiles are not rates).

    Every pricing path given this catalog (forecast, simulate, optimize) then prices those
    categories at the fitted $/node-hour instead of modelling them (``costs.bill_rates``).
    """
    if not calibrations:
        return catalog  # and the bills package stays unimported (``forecast --json`` start-up)
    from trainbill.bills.calibrate import BillCalibration

    fitted = tuple(bill_rates_of(c) for c in calibrations if isinstance(c, BillCalibration))
    if not fitted:
        return catalog
    return replace(catalog, bill_rates=(*catalog.bill_rates, *fitted))


@record
class Calibrated:
    """What calibrations change for one plan: the catalog every driver prices with (bill rates
    on it), the measured MFU the time model uses (None: modelled) and the profile notes."""

    catalog: Catalog
    measured_mfu: float | None
    cautions: tuple[Caution, ...]


def calibrate(plan: Plan, catalog: Catalog, calibrations: Sequence[Any]) -> Calibrated:
    """Apply every calibration to the plan's inputs: a profile's measured MFU (when its
    accelerator and precision match and the plan derives its hours) and bills' overhead rates.

    Forecast and simulate both start from this, so a calibration means the same in each.
    """
    if not calibrations:
        return Calibrated(catalog=catalog, measured_mfu=None, cautions=())
    _check_bill_clouds(plan, catalog, calibrations)
    measured, notes = _measured_mfu(plan, catalog, calibrations)
    notes = [*notes, *_mixed_clouds(calibrations)]
    return Calibrated(
        catalog=calibrate_catalog(catalog, calibrations),
        measured_mfu=measured,
        cautions=tuple(Caution(kind=CautionKind.CALIBRATION, text=n) for n in notes),
    )


def _mixed_clouds(calibrations: Sequence[Any]) -> list[str]:
    """A bills calibration fitted from several clouds' bills pools their overheads per GPU
    node-hour (a multi-cloud FOCUS file): allowed for any one of them, but said."""
    from trainbill.bills.calibrate import BillCalibration

    return [
        f"the bills calibration from {', '.join(cal.source_files) or 'its files'} pools the "
        f"overheads of {', '.join(cal.providers)} bills per GPU node-hour: calibrate from one "
        "cloud's bills for that cloud's plans"
        for cal in calibrations
        if isinstance(cal, BillCalibration) and len(cal.providers) > 1
    ]


def _check_bill_clouds(plan: Plan, catalog: Catalog, calibrations: Sequence[Any]) -> None:
    """A bills calibration prices the overheads of the clouds its bills are of: AWS's NAT,
    EBS and CloudWatch per node-hour say nothing of a GCP plan's, so applying them is refused
    (a file that records no cloud, written before it was recorded, is not checked)."""
    from trainbill.bills.calibrate import BillCalibration

    provider = resolve_cluster(plan, catalog)[0].provider
    for cal in calibrations:
        if isinstance(cal, BillCalibration) and cal.providers and provider not in cal.providers:
            msg = (
                f"a calibration fitted from {', '.join(cal.providers)} bills "
                f"({', '.join(cal.source_files) or 'no file named'}) cannot price a {provider} "
                f"plan's overheads; calibrate from {provider} bills"
            )
            raise SpecError(msg, field="calibration.providers")


def measured_mfu_of(plan: Plan, catalog: Catalog, calibrations: Sequence[Any]) -> float | None:
    """The measured MFU a profile calibration gives this plan, or None (modelled): the rule
    ``calibrate`` applies, for the variants of a plan the advice prices (another checkpoint
    interval keeps the measurement; another accelerator or precision drops it)."""
    return _measured_mfu(plan, catalog, calibrations)[0] if calibrations else None


def _measured_mfu(
    plan: Plan, catalog: Catalog, calibrations: Sequence[Any]
) -> tuple[float | None, list[str]]:
    """The profile calibrations' measured MFU for the plan (the last that applies), and why
    each did or did not apply."""
    from trainbill.profile.calibration import Calibration, calibrated_efficiency

    notes: list[str] = []
    measured: float | None = None
    inst, _nodes = resolve_cluster(plan, catalog)
    for cal in calibrations:
        if isinstance(cal, Calibration):
            params = int(plan.model.params) if plan.model.params else None
            mfu = calibrated_efficiency(
                cal, inst.accelerator, plan.model.precision, model_params=params
            )
            if mfu is None:
                size = f" with {cal.model_params:.3g} params" if cal.model_params else ""
                notes.append(
                    "profile calibration ignored: measured on "
                    f"{cal.accelerator or 'an uncatalogued device'}/{cal.precision}{size}; "
                    f"the plan is {inst.accelerator}/{plan.model.precision}"
                )
            elif plan.run.hours is not None:
                notes.append(
                    "profile calibration not used: the plan fixes run.hours, so nothing is "
                    "derived from MFU"
                )
            else:
                measured, note = _at_plan_seq_len(plan, catalog, cal, mfu)
                notes.append(f"time model uses the measured MFU {note} from {cal.source}")
    return measured, notes


def _at_plan_seq_len(plan: Plan, catalog: Catalog, cal: Any, mfu: float) -> tuple[float, str]:
    """The measured MFU as the same kernels would show it at the plan's sequence length, and
    the words for it.

    MFU counts causal attention in full (``FlopCounterMode`` and published MFU alike) while a
    fused kernel runs half of it, so the conventional MFU of one kernel speed grows with the
    sequence length. The measured rate of the work executed (``mfu`` x executed / counted at
    the profile's sequence length) is what carries over; read back at the plan's sequence
    length it is ``mfu`` x share(profile) / share(plan), ``timemodel.executed_share``. A
    calibration applies only to a model within 20% of its size (``calibrated_efficiency``), so
    the plan's shape stands for both; without a measured sequence length, nothing changes.
    """
    m = plan.model
    active = m.active_params or m.params
    seq = int(m.seq_len or catalog.value("defaults.model.seq_len"))
    if cal.seq_len is None or active is None or cal.seq_len == seq:
        return mfu, f"{mfu:.1%}"

    def share(at: int) -> float:
        return executed_share(catalog, active_params=active, seq_len=at, layers=m.layers,
                              d_model=m.d_model)  # fmt: skip

    at_plan = mfu * share(cal.seq_len) / share(seq)
    return at_plan, (
        f"{mfu:.1%} at seq {cal.seq_len:,}, {at_plan:.1%} at the plan's seq {seq:,} (the same "
        "kernel speed: MFU counts causal attention in full, a fused kernel runs half of it)"
    )


def calibration_cautions(
    usage: Usage, calibrated: Calibrated, *, today: date | None = None
) -> tuple[Caution, ...]:
    """What a calibrated result must say, worded as the forecast words it: the bill rates that
    priced the plan (the forecast's own calibration cautions), then the profile notes."""
    if not calibrated.catalog.bill_rates:
        return calibrated.cautions
    fc = forecast_usage(usage, calibrated.catalog, today=today)
    return (*fc.cautions_of(CautionKind.CALIBRATION), *calibrated.cautions)


def forecast_calibrated(
    plan: Plan, catalog: Catalog, calibrations: Sequence[Any], *, today: date | None = None
) -> Forecast:
    """Forecast with every calibration applied: a profile's measured MFU to the time model,
    bills' overhead rates to the catalog the drivers price with."""
    c = calibrate(plan, catalog, calibrations)
    fc = forecast_usage(
        usage_for(plan, c.catalog, today=today, measured_mfu=c.measured_mfu), c.catalog, today=today
    )
    band = error_band(plan, c.catalog, fc, today, measured_mfu=c.measured_mfu)
    return replace(fc, cautions=(*fc.cautions, *c.cautions), band=band)


def plan_cautions(
    plan: Plan, calibrated: Calibrated, *, today: date | None = None
) -> tuple[Caution, ...]:
    """The calibration cautions of one plan priced on the calibrated catalog: the planner's
    best plan, worded as its own forecast words them (CLI and API alike)."""
    usage = usage_for(plan, calibrated.catalog, today=today)
    return calibration_cautions(usage, calibrated, today=today)
