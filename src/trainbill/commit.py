"""Savings Plan advisor: how much GPU capacity to commit to, and for how long.

A commitment of K GPU-hours a month is paid whether used or not, at the commitment rate r_c;
usage above K is bought on demand at r_od. With monthly usage u drawn from the history (each
month equally likely: a stationary forecast), the expected monthly cost is

    cost(K) = K · r_c · (paid months / horizon months) + E[max(0, u − K)] · r_od

where a 1-year term is renewed ⌈H/12⌉ times and a 3-year term ⌈H/36⌉ times over a horizon of
H months (the months you expect the workload to last), so the tail of a term outliving the
workload is paid for nothing; or, where it costs less, renewed only ⌊H/L⌋ times with the
months past the last whole term bought on demand (a 48-month horizon on a 3-year plan need
not pay 72 months). cost(K) is piecewise linear with kinks at the observed months, so
the exact minimum is at 0 or at one of them. Its derivative says the last committed GPU-hour
pays when P(u > K) ≥ r_c_eff / r_od: the **break-even utilization** (commitment rate over
on-demand rate). At p5's 1-yr EC2 Instance rate ($34.6752 / $55.04 = 0.63) a committed hour
must be used 63% of the time; the optimal commitment is the (1 − break-even) quantile of
monthly usage.

The seed article's rule "cover 60–70% of baseline" (baseline = the lowest month here) is
checked against that optimum, also for futures where usage shrinks or grows, to show where the
rule is sound (usage likely to fall by a third) and where it leaves money on the table (steady
usage). Monthly granularity ignores hour-to-hour variation inside a month, which overstates
utilization for spiky workloads.
"""

from __future__ import annotations

import csv
import io
import math
import re
from datetime import date
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import PriceNotFoundError, SpecError, shown_value
from trainbill.spec import MAX_GPUS
from trainbill.usage import beyond_price_data, check_region

__all__ = [
    "DEFAULT_INSTANCE",
    "RULE_OF_THUMB",
    "SCENARIOS",
    "TERMS",
    "CommitAdvice",
    "MonthlyUsage",
    "RuleCheck",
    "TermAdvice",
    "advise_commitment",
    "parse_usage_csv",
]

#: Term name → months.
TERMS: dict[str, int] = {"1yr": 12, "3yr": 36}
#: The article's rule: commit 60–70% of baseline GPU capacity.
RULE_OF_THUMB: tuple[float, float] = (0.60, 0.70)
#: Future usage as a multiple of the history, for the rule check.
SCENARIOS: tuple[float, ...] = (0.5, 0.7, 1.0, 1.3)
#: The rule "holds" when its extra cost over the optimum is within this share of on-demand.
RULE_TOLERANCE = 0.01
#: The default instance: AWS's H100-class instance whose Savings Plan rate is published in the
#: packaged catalog (p5en.48xlarge, 3-yr EC2 Instance Savings Plan); p5.48xlarge has none.
DEFAULT_INSTANCE = "p5en.48xlarge"
_MONTH = re.compile(r"^\d{4}-\d{2}$")
#: Commas allowed only as thousands separators: 1,234 or 12,345,678.5.
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")


@record
class MonthlyUsage:
    """GPU-hours used per calendar month, oldest first."""

    months: tuple[str, ...]
    gpu_hours: tuple[float, ...]
    source: str = "usage"


#: Most GPU-hours one month can hold: the plans' GPU cap (``spec.MAX_GPUS``) × 31 days × 24 h.
MAX_MONTHLY_GPU_HOURS = MAX_GPUS * 31 * 24
#: Longest workload horizon the advisor plans for: 50 years, far past any 1- or 3-year term.
MAX_HORIZON_MONTHS = 600


def parse_usage_csv(text: str, *, source: str = "usage.csv") -> MonthlyUsage:
    """Parse ``month,gpu_hours`` CSV text (extra columns are ignored).

    Raises:
        SpecError: naming the file, row and column: missing columns, a month not in YYYY-MM
            form or repeated, a GPU-hour figure that is not a number ≥ 0, or no rows.
    """
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("month", "gpu_hours") if c not in header]
    if missing:
        msg = (
            f"missing column(s) {', '.join(missing)}; the header must include month,gpu_hours "
            f"(got {','.join(header) or 'nothing'})"
        )
        raise SpecError(msg, source=source, field="header")
    months: list[str] = []
    seen: set[str] = set()  # a set, not ``months``: a list test made the reading quadratic
    hours: list[float] = []
    try:
        rows = list(reader)  # the input gate caps the file at INPUT_LIMITS["usage"]
    except csv.Error as exc:  # a 200 KB cell is past the csv module's field limit
        msg = f"not a readable CSV file ({exc}) at line {reader.line_num}"
        raise SpecError(msg, source=source) from None
    for row_no, raw in enumerate(rows, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
        month = row.get("month", "")
        if not _MONTH.match(month) or not 1 <= int(month[5:]) <= 12:
            msg = f"{shown_value(month)} is not a month; use YYYY-MM (e.g. 2026-01)"
            raise SpecError(msg, source=source, field=f"row {row_no}, column month")
        if month in seen:
            msg = f"month {month} appears twice; give one total per month"
            raise SpecError(msg, source=source, field=f"row {row_no}, column month")
        value = row.get("gpu_hours", "")
        if "," in value and not _THOUSANDS.match(value):
            # "2.500,5" or "2,5": a decimal comma. Dropping the comma read 2.500,5 as 2.5005.
            msg = (
                f"{shown_value(value)} has a comma that is not a thousands separator; write the "
                "number with "
                "a decimal point (e.g. 2500.5)"
            )
            raise SpecError(msg, source=source, field=f"row {row_no}, column gpu_hours")
        try:
            number = float(value.replace("_", "").replace(",", ""))
        except ValueError:
            number = math.nan
        if not math.isfinite(number) or number < 0:
            msg = f"{shown_value(value)} is not a number of GPU-hours >= 0"
            raise SpecError(msg, source=source, field=f"row {row_no}, column gpu_hours")
        if number > MAX_MONTHLY_GPU_HOURS:
            msg = (f"{shown_value(value)} GPU-hours in one month is more than {MAX_GPUS:,} GPUs "
                   "running all "
                   f"31 days ({MAX_MONTHLY_GPU_HOURS:.3g}): a typo?")  # fmt: skip
            raise SpecError(msg, source=source, field=f"row {row_no}, column gpu_hours")
        months.append(month)
        seen.add(month)
        hours.append(number)
    if not months:
        msg = "no data rows; give at least one month of GPU-hours"
        raise SpecError(msg, source=source, field="rows")
    order = sorted(range(len(months)), key=lambda i: months[i])
    gaps = _missing_months([months[i] for i in order])
    if gaps:
        # Each month is one draw of the usage to come: a month left out is not "no usage" to
        # the advice, it is a month that does not exist, and the optimum moves.
        shown = ", ".join(gaps[:6]) + (f" and {len(gaps) - 6} more" if len(gaps) > 6 else "")
        msg = (
            f"month(s) {shown} missing between {months[order[0]]} and {months[order[-1]]}; add "
            "them (gpu_hours 0 if nothing ran), so every month counts once"
        )
        raise SpecError(msg, source=source, field="column month")
    return MonthlyUsage(
        months=tuple(months[i] for i in order),
        gpu_hours=tuple(hours[i] for i in order),
        source=source,
    )


@record
class RuleCheck:
    """The 60–70% rule against the optimum, in a future where usage is ``scale`` × history."""

    scale: float
    optimal_commit_gpu_hours: float
    #: None when the baseline (the lowest month) is 0: no share of nothing to report.
    optimal_share_of_baseline: float | None
    rule_regret_usd_per_month: float
    holds: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "scale": self.scale,
            "optimal_commit_gpu_hours": self.optimal_commit_gpu_hours,
            "optimal_share_of_baseline": self.optimal_share_of_baseline,
            "rule_regret_usd_per_month": self.rule_regret_usd_per_month,
            "holds": self.holds,
        }


@record
class TermAdvice:
    """The best commitment for one term, and the rule of thumb checked against it."""

    term: str
    rate_usd_per_gpu_hour: float
    rate_source: str
    break_even_utilization: float
    effective_break_even_utilization: float
    commit_gpu_hours_per_month: float
    commit_usd_per_hour: float
    #: None when the baseline (the lowest month) is 0.
    share_of_baseline: float | None
    expected_usd_per_month: float
    savings_pct: float
    expected_utilization: float
    rule_usd_per_month: tuple[float, float]
    rule_checks: tuple[RuleCheck, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "term": self.term,
            "rate_usd_per_gpu_hour": self.rate_usd_per_gpu_hour,
            "rate_source": self.rate_source,
            "break_even_utilization": self.break_even_utilization,
            "effective_break_even_utilization": self.effective_break_even_utilization,
            "commit_gpu_hours_per_month": self.commit_gpu_hours_per_month,
            "commit_usd_per_hour": self.commit_usd_per_hour,
            "share_of_baseline": self.share_of_baseline,
            "expected_usd_per_month": self.expected_usd_per_month,
            "savings_pct": self.savings_pct,
            "expected_utilization": self.expected_utilization,
            "rule_usd_per_month": list(self.rule_usd_per_month),
            "rule_checks": [r.as_dict() for r in self.rule_checks],
        }


@record
class CommitAdvice:
    """Recommendation: the cheapest term and level, with every term's numbers."""

    instance: str
    provider: str
    region: str
    as_of: date
    horizon_months: int
    months: int
    baseline_gpu_hours: float
    mean_gpu_hours: float
    peak_gpu_hours: float
    on_demand_usd_per_gpu_hour: float
    on_demand_usd_per_month: float
    terms: tuple[TermAdvice, ...]
    best_term: str
    #: Terms left out, each with why: no published rate (a claimed discount is no price).
    unpriced_terms: tuple[str, ...] = ()
    #: What else the user must know (prices from another region than asked for).
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The JSON of ``trainbill commit --json``."""
        return {
            "instance": self.instance,
            "provider": self.provider,
            "region": self.region,
            "as_of": self.as_of.isoformat(),
            "horizon_months": self.horizon_months,
            "months": self.months,
            "baseline_gpu_hours": self.baseline_gpu_hours,
            "mean_gpu_hours": self.mean_gpu_hours,
            "peak_gpu_hours": self.peak_gpu_hours,
            "on_demand_usd_per_gpu_hour": self.on_demand_usd_per_gpu_hour,
            "on_demand_usd_per_month": self.on_demand_usd_per_month,
            "best_term": self.best_term,
            "terms": [t.as_dict() for t in self.terms],
            "unpriced_terms": list(self.unpriced_terms),
            "notes": list(self.notes),
        }


def _missing_months(months: list[str]) -> list[str]:
    """The YYYY-MM months absent between the first and the last of ``months`` (sorted)."""
    have = set(months)
    y, m = int(months[0][:4]), int(months[0][5:])
    out: list[str] = []
    while f"{y:04d}-{m:02d}" != months[-1]:
        if f"{y:04d}-{m:02d}" not in have:
            out.append(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _monthly_cost(
    k: float, usage: np.ndarray[Any, np.dtype[np.float64]], r_c: float, r_od: float
) -> float:
    return k * r_c + float(np.maximum(usage - k, 0.0).mean()) * r_od


def _horizon_cost(k: float, u: Any, r_c: float, r_od: float, tail: float) -> float:
    """Cost per month of the horizon at commitment ``k``: ``_monthly_cost`` over the covered
    months, on demand over the ``tail`` share of the horizon past the last whole term."""
    return (1 - tail) * _monthly_cost(k, u, r_c, r_od) + tail * float(u.mean()) * r_od


def _best(u: Any, r_c: float, r_od: float, tail: float) -> tuple[float, float]:
    """The optimal commitment (``_optimum``: the tail does not move it) and its horizon cost."""
    k, _ = _optimum(u, r_c, r_od)
    return k, _horizon_cost(k, u, r_c, r_od, tail)


def _optimum(
    usage: np.ndarray[Any, np.dtype[np.float64]], r_c: float, r_od: float
) -> tuple[float, float]:
    """Exact minimiser of the piecewise-linear cost: 0 or one of the observed months."""
    best_k, best = 0.0, _monthly_cost(0.0, usage, r_c, r_od)
    for k in np.unique(usage):
        c = _monthly_cost(float(k), usage, r_c, r_od)
        if c < best - 1e-9:
            best_k, best = float(k), c
    return best_k, best


def _kind(provider: str, kind: str | None) -> str:
    """The commitment kind the advice prices: the one asked for, else on AWS an EC2 Instance
    Savings Plan (a steady baseline on one instance type, the deeper discount), else the
    provider's committed-use / reservation rate ("")."""
    if provider != "aws":
        return ""
    return kind or "ec2-instance"


def _rates(
    catalog: Catalog, instance: str, region: str, as_of: date, term: str, kind: str
) -> tuple[float, str] | None:
    """The commitment rate for ``term`` and its citation, or None.

    Asked of the one rule the forecast's discount line uses
    (``costs._pricing.commitment_rate_for``: the kind's published rate, its RI proxy, or the
    earliest published rate carried back by the provider's on-demand ratio); a rate derived
    from a claimed discount (the seed article's 42 %/55 % for p5) would make the advice a
    restatement of the claim.
    """
    from trainbill.costs._pricing import commitment_rate_for

    inst = catalog.instance(instance)
    rate = commitment_rate_for(
        catalog, item=instance, provider=inst.provider, region=region, as_of=as_of, kind=kind,
        term=term,
    )  # fmt: skip
    return None if rate is None else (rate.usd, rate.source)


def _unpriced_term(catalog: Catalog, instance: str, region: str, as_of: date, term: str) -> str:
    inst = catalog.instance(instance)
    return (
        f"{term}: no published {term} commitment rate for {instance} ({inst.provider}, "
        f"{region}) on {as_of}; add an sp_{term} price point with --catalog DIR "
        "('trainbill prices update aws' fetches EC2 Instance Savings Plan rates)"
    )


@record
class _Term:
    """A commitment term and its published rate per GPU-hour."""

    term: str
    length: int
    usd_per_gpu_hour: float
    source: str


def _term_advice(
    catalog: Catalog,
    t: _Term,
    u: np.ndarray[Any, np.dtype[np.float64]],
    r_od: float,
    horizon_months: int,
    notes: list[str],
) -> TermAdvice:
    """The best commitment of one term over the horizon, the rule of thumb's cost beside it, and
    how the rule fares when usage scales (``SCENARIOS``); a note when the last partial term is
    better left on demand."""
    r_c = t.usd_per_gpu_hour
    baseline = float(u.min())
    od_month = float(u.mean()) * r_od
    paid = math.ceil(horizon_months / t.length) * t.length
    r_eff = r_c * paid / horizon_months
    # The alternative: whole terms only, the months past them on demand.
    covered = (horizon_months // t.length) * t.length
    share = covered / horizon_months
    renew = True
    if 0 < covered < horizon_months:
        _, renewed = _optimum(u, r_eff, r_od)
        _, whole = _optimum(u, r_c, r_od)
        renew = renewed <= share * whole + (1 - share) * float(u.mean()) * r_od
    if not renew:
        r_eff = r_c
        notes.append(
            f"{t.term}: {horizon_months - covered} month(s) past the last whole term on demand; "
            "another term would cost more than it saves"
        )
    tail = 0.0 if renew else 1 - share  # share of the horizon bought on demand
    k, cost = _best(u, r_eff, r_od, tail)
    rule = tuple(_horizon_cost(f * baseline, u, r_eff, r_od, tail) for f in RULE_OF_THUMB)
    return TermAdvice(
        term=t.term,
        rate_usd_per_gpu_hour=r_c,
        rate_source=t.source,
        break_even_utilization=r_c / r_od,
        effective_break_even_utilization=r_eff / r_od,
        commit_gpu_hours_per_month=k,
        commit_usd_per_hour=k * r_c / float(catalog.value("reliability.hours_per_month")),
        share_of_baseline=k / baseline if baseline > 0 else None,
        expected_usd_per_month=cost,
        savings_pct=100.0 * (1.0 - cost / od_month) if od_month > 0 else 0.0,
        expected_utilization=float(np.minimum(u, k).mean()) / k if k > 0 else 0.0,
        rule_usd_per_month=(rule[0], rule[1]),
        rule_checks=_rule_checks(u, baseline, r_eff, r_od, tail),
    )


def _rule_checks(
    u: np.ndarray[Any, np.dtype[np.float64]], baseline: float, r_eff: float, r_od: float,
    tail: float,
) -> tuple[RuleCheck, ...]:  # fmt: skip
    """The rule of thumb against the optimum when usage is scaled by each of ``SCENARIOS``."""
    checks = []
    for scale in SCENARIOS:
        us = u * scale
        ks, cs = _best(us, r_eff, r_od, tail)
        rule_cost = min(_horizon_cost(f * baseline, us, r_eff, r_od, tail) for f in RULE_OF_THUMB)
        regret = rule_cost - cs
        checks.append(
            RuleCheck(
                scale=scale,
                optimal_commit_gpu_hours=ks,
                optimal_share_of_baseline=ks / baseline if baseline > 0 else None,
                rule_regret_usd_per_month=regret,
                # Judged over the committed months: the on-demand tail (``tail``) has no
                # commitment to get wrong, and averaging it in made a rule that failed at
                # 36 months "hold" at 48 with the same total regret.
                holds=regret <= RULE_TOLERANCE * float(us.mean()) * r_od * (1 - tail),
            )
        )
    return tuple(checks)


def advise_commitment(
    usage: MonthlyUsage,
    catalog: Catalog,
    *,
    instance: str = DEFAULT_INSTANCE,
    region: str | None = None,
    as_of: date,
    horizon_months: int = 36,
    today: date | None = None,
    kind: str | None = None,
) -> CommitAdvice:
    """Recommend a commitment level and term for the monthly usage (see the module docstring).

    Args:
        usage: monthly GPU-hours (history, used as the forecast).
        catalog: on-demand and published commitment prices (``costs._pricing.commitment_rate_for``
            picks one per kind and term); a term without one is left out (``unpriced_terms``).
        instance: the instance type the GPU-hours run on (rates are per GPU-hour).
        region: price region; default the provider's reference region.
        as_of: price date.
        horizon_months: how long the workload is expected to last.
        today: the day the advice is given (a price date past it and the catalog is said).
        kind: the AWS Savings Plan kind ("ec2-instance" by default, or "compute"); ignored
            elsewhere.

    Raises:
        SpecError: horizon below one month.
        PriceNotFoundError: the instance has no on-demand price, or no published commitment
            rate for either term.
    """
    if not 1 <= horizon_months <= MAX_HORIZON_MONTHS:
        msg = f"horizon must be 1 to {MAX_HORIZON_MONTHS} months (got {horizon_months})"
        raise SpecError(msg, field="horizon_months")
    if kind not in (None, "compute", "ec2-instance"):
        msg = f"{kind!r} is not a Savings Plan kind the advisor prices (compute, ec2-instance)"
        raise SpecError(msg, field="kind")
    inst = catalog.instance(instance)
    reg = region if region is not None else catalog.reference_region(inst.provider)
    check_region(catalog, inst.provider, reg, field="--region")
    od = catalog.price(instance, "on_demand", provider=inst.provider, region=reg, as_of=as_of)
    notes: list[str] = []
    day = today or date.today()  # noqa: DTZ011 - a calendar date, not a time
    beyond = beyond_price_data(catalog, as_of, day)
    if beyond is not None:
        notes.append(f"--as-of {beyond}")
    if od.region != reg:
        notes.append(
            f"no {instance} price for {reg} in the catalog: the {od.region} prices are used "
            "(add your region's with --catalog DIR)"
        )
    r_od = od.usd / inst.accelerator_count
    u = np.array(usage.gpu_hours, dtype=np.float64)
    baseline = float(u.min())
    od_month = float(u.mean()) * r_od
    advice: list[TermAdvice] = []
    unpriced: list[str] = []
    for term, length in TERMS.items():
        published = _rates(catalog, instance, reg, as_of, term, _kind(inst.provider, kind))
        if published is None:
            unpriced.append(_unpriced_term(catalog, instance, reg, as_of, term))
            continue
        priced = _Term(
            term=term, length=length, usd_per_gpu_hour=published[0] / inst.accelerator_count,
            source=published[1],
        )  # fmt: skip
        advice.append(_term_advice(catalog, priced, u, r_od, horizon_months, notes))
    if not advice:
        msg = (
            f"no published commitment rate for {instance} ({inst.provider}, {reg}) on {as_of}, "
            f"for any term: the advice needs the provider's rate, not a claimed discount. "
            f"Instances with one in the catalog: {_committable(catalog, inst.provider)}. To fix: "
            "choose one with --instance, or add sp_1yr / sp_3yr price points with --catalog DIR"
        )
        raise PriceNotFoundError(msg)
    best = min(advice, key=lambda t: t.expected_usd_per_month)
    return CommitAdvice(
        instance=instance,
        provider=inst.provider,
        region=reg,
        as_of=as_of,
        horizon_months=horizon_months,
        months=len(u),
        baseline_gpu_hours=baseline,
        mean_gpu_hours=float(u.mean()),
        peak_gpu_hours=float(u.max()),
        on_demand_usd_per_gpu_hour=r_od,
        on_demand_usd_per_month=od_month,
        terms=tuple(advice),
        best_term=best.term if best.commit_gpu_hours_per_month > 0 else "none",
        unpriced_terms=tuple(unpriced),
        notes=tuple(notes),
    )


def _committable(catalog: Catalog, provider: str) -> str:
    """The instances of ``provider`` with a published commitment rate, for an error message."""
    held = sorted(
        {
            p.item
            for p in catalog.prices
            if p.provider == provider and p.option.split("_")[-2:-1] in (["sp"], ["ri"])
        }
    )
    return ", ".join(held) or "none"
