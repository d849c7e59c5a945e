"""The ranked actions: each a change the user can buy or set, priced by the same forecast as
the plan (``usage_for`` and the cost drivers) against the plan as written.

The checkpoint interval's Young/Daly optimum (``usage``), spot or not (deadline odds from
``simulate``), the node count (``optimize`` over node counts with the plan's mix held fixed), a
Savings Plan bought for the run (only where the catalog has a published rate, its unused term
charged), the cheapest region or zone for the same instance in the catalog, an S3 gateway
endpoint. Savings are against the plan, one change at a time: they do not add up.
``headline.outlook_of`` asks each in turn and ranks them (``rank_actions``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from datetime import date
from typing import Any, Literal, TypeVar

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.costs import discount as discount_driver
from trainbill.costs._pricing import commitment_name
from trainbill.errors import TrainbillError
from trainbill.forecasting import (
    CautionKind,
    Forecast,
    plain_words,
)
from trainbill.optimize import optimize, own_mix_space
from trainbill.simulate import Simulation, simulate
from trainbill.sizing import SIZING_FACTORS, at_node_count, right_sizing
from trainbill.spec import Plan, merge_plan_dicts, plan_from_dict

__all__ = [
    "MIN_SAVING_USD",
    "Action",
    "ActionKind",
    "Pricer",
    "checkpoint_action",
    "rank_actions",
    "region_action",
    "right_size_action",
    "s3_endpoint_action",
    "savings_plan_action",
    "sized_action",
    "spot_action",
    "zone_action",
]

#: Savings below one dollar are rounding, not an action.
MIN_SAVING_USD = 1.0

ActionKind = Literal[
    "checkpoint_interval", "spot", "right_size", "savings_plan", "no_savings_plan",
    "region", "zone", "s3_gateway_endpoint",
]  # fmt: skip


@record
class Action:
    """A change the user can make, its expected saving against the plan, and what it risks.

    ``change`` names the plan fields to set (``section.key``: value), so the action can be
    applied to the plan file as it stands.
    """

    kind: ActionKind
    title: str
    saving_usd: float
    total_usd: float
    caveat: str
    change: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "kind": self.kind,
            "title": self.title,
            "saving_usd": self.saving_usd,
            "total_usd": self.total_usd,
            "caveat": self.caveat,
            # The caveat without flags or field keys, for the calculator's action list.
            "caveat_plain": plain_words(self.caveat),
            "change": dict(self.change),
        }


# --- actions ---------------------------------------------------------------------------------

Pricer = Callable[[Plan], Forecast]
K = TypeVar("K")


def _variant(
    plan: Plan,
    changes: Mapping[str, Mapping[str, Any]],
    drop: Mapping[str, tuple[str, ...]] | None = None,
) -> Plan:
    """The plan with some fields set (and some removed), validated like any plan."""
    data = plan.model_dump(mode="json", exclude_none=True)
    for section, keys in (drop or {}).items():
        for key in keys:
            data.get(section, {}).pop(key, None)
    # A plan subclass (the sparse-attention what-if) keeps its own fields on the variant.
    extra = {k: data.pop(k) for k in list(data) if k not in Plan.model_fields}
    variant = plan_from_dict(merge_plan_dicts(data, changes), source="what-to-do variant")
    if not extra:
        return variant
    return type(plan).model_validate(
        {**variant.model_dump(mode="json", exclude_none=True), **extra}
    )


def _action(kind: ActionKind, fc: Forecast, alt: Forecast, title: str, caveat: str,
            change: Mapping[str, Any]) -> Action:  # fmt: skip
    """The action, its caveat completed with what the variant's own plan warns of and the
    plan's does not (a HyperPod cluster moved to spot is priced at the EC2 Spot rate, with no
    published HyperPod Spot rate; a node count that splits the spot share into fractions):
    a user acting on the saving must see what the forecast of that plan would say."""
    new = [w for w in alt.usage.warnings if w not in fc.usage.warnings]
    return Action(
        kind=kind,
        title=title,
        saving_usd=fc.total_usd - alt.total_usd,
        total_usd=alt.total_usd,
        caveat="; ".join(x for x in (caveat, *new) if x),
        change=change,
    )


#: One variant an action compares: its key, how to build the plan, and the note to keep when it
#: cannot be priced (None: skip it silently).
Try = tuple[K, Callable[[], Plan], Callable[[TrainbillError], str] | None]


def _not_priced(what: str, *, first_clause: bool = False) -> Callable[[TrainbillError], str]:
    """The note for a variant that cannot be priced: "what: not priced (why)", or with
    ``first_clause`` the error's first clause only (a missing rate's how-to is in the docs)."""

    def say(exc: TrainbillError) -> str:
        if first_clause:
            return f"{what}: {str(exc).split(': the catalog', 1)[0]}"
        return f"{what}: not priced ({exc})"

    return say


def _cheapest(
    price: Pricer, tries: Iterable[Try[K]], notes: list[str]
) -> tuple[K, Forecast] | None:
    """The cheapest variant that can be priced: the one rule every action comparing variants
    (spot share, commitment, region, zone) uses; a variant that fails leaves its note."""
    best: tuple[K, Forecast] | None = None
    for key, make, note in tries:
        try:
            alt = price(make())
        except TrainbillError as exc:
            if note is not None:
                notes.append(note(exc))
            continue
        if best is None or alt.total_usd < best[1].total_usd:
            best = (key, alt)
    return best


def checkpoint_action(plan: Plan, fc: Forecast, price: Pricer) -> Action | None:
    """The Young/Daly interval ``usage`` works out, where the plan states another one."""
    u = fc.usage
    opt, given = u.checkpoint.interval_optimum_hours, plan.checkpoint.interval_hours
    if opt is None or given is None:
        return None
    target = round(opt, 2)
    if target <= 0 or target == given:
        return None
    alt = price(_variant(plan, {"checkpoint": {"interval_hours": target}}))
    if target > given:
        caveat = (
            f"each failure or reclaim then loses {target / 2:.2g} h of work on average instead "
            f"of {given / 2:.2g} h, and checkpoints also serve rollbacks after a loss spike: a "
            f"rollback goes back up to {target:g} h"
        )
    else:
        caveat = (
            f"{alt.usage.checkpoint.count - u.checkpoint.count:,.0f} more checkpoint writes, "
            f"each pausing training {_duration(u.checkpoint.stall_hours_each)} (priced)"
        )
    title = (
        f"Checkpoint every {target:g} h instead of {given:g} h (Young/Daly optimum for this "
        "cluster)"
    )
    return _action(
        "checkpoint_interval", fc, alt, title, caveat, {"checkpoint.interval_hours": target}
    )


def s3_endpoint_action(plan: Plan, fc: Forecast, price: Pricer) -> Action | None:
    """An AWS plan sending its S3 traffic through NAT (``network.s3_via_nat``) pays NAT data
    processing on every byte, and its S3 checkpoints move at the gateways' bandwidth: an S3
    gateway VPC endpoint carries the same traffic at no charge, so the action is the plan with
    ``s3_via_nat = false``, priced like any variant."""
    u = fc.usage
    if u.provider != "aws" or not u.network.s3_via_nat:
        return None
    alt = price(_variant(plan, {"network": {"s3_via_nat": False}}))
    caveat = (
        "no charge for gateway endpoints (AWS VPC documentation, 'Gateway endpoints'); route the "
        "cluster subnets' S3 traffic to it; same-region buckets only"
    )
    title = "Add an S3 gateway VPC endpoint (S3 bypasses the NAT gateway)"
    return _action("s3_gateway_endpoint", fc, alt, title, caveat, {"network.s3_via_nat": False})


def _duration(h: float) -> str:
    """A short pause in the unit a person reads it in (``14 s``, ``3.0 min``, ``1.2 h``)."""
    if h * 60 < 1:
        return f"{h * 3600:.0f} s"
    return f"{h * 60:.1f} min" if h < 1 else f"{h:.2g} h"


def _miss(sim: Simulation) -> float | None:
    return sim.deadline_miss_probability


def spot_action(
    plan: Plan,
    fc: Forecast,
    catalog: Catalog,
    price: Pricer,
    base_sim: Simulation | None,
    notes: list[str],
) -> Action | None:
    """All nodes on spot (when some are not) or all on demand (when some are on spot)."""
    u = fc.usage
    targets = ([1.0] if u.purchase.spot_fraction < 1 else []) + (
        [0.0] if u.purchase.spot_fraction > 0 else []
    )
    best = _cheapest(price, (
        (t, functools.partial(_variant, plan, {"purchase": {"spot_fraction": t}}),
         _not_priced(f"spot share {t:.0%}"))
        for t in targets
    ), notes)  # fmt: skip
    if best is None:
        return None
    target, alt = best
    deadline = plan.run.deadline_hours
    risk = ""
    if deadline is not None and base_sim is not None:
        sim = simulate(
            alt.usage, catalog, trials=base_sim.trials, rng=base_sim.seed, deadline_hours=deadline
        )
        before, after = _miss(base_sim) or 0.0, _miss(sim) or 0.0
        risk = f"chance of missing the {deadline:g} h deadline {before:.0%} → {after:.0%}"
    inst, nodes = u.instance.instance, u.nodes
    if target > 0:
        spot_nodes = nodes * target
        row = catalog.spot_row(inst, provider=u.provider, region=u.region, as_of=u.as_of)
        seen = (
            f"Spot Advisor: {row.interruption_bucket} interrupted per month in {u.region}"
            if row is not None
            else f"no spot interruption data for {inst} in {u.region}"
        )
        caveat = "; ".join(
            x
            for x in (
                risk
                or "no deadline in the plan to check against: "
                f"{alt.usage.reliability.reclaim_events:.2g} expected reclaims make the run "
                f"{alt.usage.wall_hours - u.wall_hours:+.1f} h longer",
                f"{spot_nodes:g} × {inst} on spot at once is not guaranteed capacity ({seen})",
            )
            if x
        )
        all_nodes = f"all {nodes} nodes" if nodes != 1 else "the node"
        title = f"Run {all_nodes} on spot (the plan: {u.purchase.spot_fraction * nodes:g})"
        if u.purchase.savings_plan != "none" and u.purchase.savings_plan_coverage > 0:
            # A Savings Plan covers on-demand hours only: sized by them, it is not bought here,
            # and most of this saving can be its term (say so, or it reads as spot's alone).
            title += (
                f", without the {u.purchase.savings_plan} Savings Plan (it would cover nothing)"
            )
    else:
        caveat = "; ".join(
            x for x in (risk, f"needs on-demand capacity and quota for {nodes} × {inst}") if x
        )
        all_nodes = f"all {nodes} nodes" if nodes != 1 else "the node"
        title = (
            f"Run {all_nodes} on demand (the plan: {u.purchase.spot_fraction * nodes:g} on spot)"
        )
    return _action("spot", fc, alt, title, caveat, {"purchase.spot_fraction": target})


def right_size_action(
    plan: Plan, fc: Forecast, catalog: Catalog, price: Pricer, today: date | None, notes: list[str]
) -> Action | None:
    """The planner's cheapest node count for the plan's instance and mix, within the plan's
    deadline or, without one, its own wall-clock: a smaller cluster that takes three times as
    long is a different plan, not a saving an approver asked for."""
    u = fc.usage
    limit = plan.run.deadline_hours if plan.run.deadline_hours is not None else u.wall_hours
    try:
        res = optimize(
            plan,
            catalog,
            space=own_mix_space(u),
            clouds=(u.provider,),
            today=today,
            deadline_hours=limit,
        )
    except TrainbillError as exc:
        notes.append(f"right size: the planner could not search node counts ({exc})")
        return None
    best = res.best
    if best.is_user_plan or best.nodes == u.nodes:
        return None
    alt = price(res.best_plan)
    parts = [
        (
            f"{best.nodes} nodes take {alt.usage.wall_hours:,.1f} h of wall-clock instead of "
            f"{u.wall_hours:,.1f} h"
        )
    ]
    if plan.run.hours is not None:
        parts.append(
            "the plan gives training hours, not the model size, so the hours are scaled by GPU "
            "count (perfect scaling assumed; give the model size and tokens for the time model's "
            "own scaling)"
        )
    parts.extend(c.text for c in best.caveats)
    title = f"Use {best.nodes:,} nodes ({best.gpus:,} GPUs) instead of {u.nodes:,}"
    change: dict[str, Any] = {"cluster.nodes": best.nodes}
    if plan.run.hours is not None and res.best_plan.run.hours is not None:
        change["run.hours"] = res.best_plan.run.hours
    return _action("right_size", fc, alt, title, "; ".join(parts), change)


def sized_action(
    plan: Plan, fc: Forecast, catalog: Catalog, price: Pricer, today: date | None
) -> Action | None:
    """Right-size for a plan whose kernel efficiency is measured: the planner prices node
    counts with the modelled efficiency, so the cheapest point of the node-count sweep
    (``sizing.right_sizing``: ``SIZING_FACTORS`` × the plan's nodes), each priced as the plan
    is (the measured MFU holds on the same instance), within the plan's deadline or, without
    one, its own wall-clock."""
    u = fc.usage
    limit = plan.run.deadline_hours if plan.run.deadline_hours is not None else u.wall_hours
    points, _basis = right_sizing(plan, catalog, today=today, base=fc, price=price)
    fits = [pt for pt in points if not pt.current and pt.wall_hours <= limit]
    best = min(fits, key=lambda pt: pt.total_usd, default=None)
    if best is None or best.total_usd >= fc.total_usd:
        return None
    change: dict[str, Any] = {"cluster.nodes": best.nodes}
    alt = price(at_node_count(plan, fc, best.nodes))
    caveat = (
        f"{best.nodes} nodes take {alt.usage.wall_hours:,.1f} h of wall-clock instead of "
        f"{u.wall_hours:,.1f} h; node counts ×{min(SIZING_FACTORS):g}–×{max(SIZING_FACTORS):g} "
        "of the plan's, each priced with the measured MFU (the planner's finer search uses the "
        "modelled efficiency)"
    )
    title = f"Use {best.nodes:,} nodes ({best.gpus:,} GPUs) instead of {u.nodes:,}"
    return _action("right_size", fc, alt, title, caveat, change)


def savings_plan_action(
    plan: Plan, fc: Forecast, catalog: Catalog, price: Pricer, notes: list[str]
) -> Action | None:
    """A commitment bought for this run, its whole term charged; only at a published rate.

    On AWS both the kind the plan would get by default (Compute, or SageMaker under HyperPod)
    and, off HyperPod, an EC2 Instance Savings Plan for the instance's family are tried: the
    catalog may publish a rate for one and not the other (p5en: EC2 Instance 3yr only).
    """
    u = fc.usage
    if u.purchase.savings_plan != "none" and u.purchase.commitment == "buy":
        return _no_savings_plan_action(plan, fc, price)
    if u.purchase.spot_fraction >= 1 or u.purchase.savings_plan != "none":
        return None
    kinds: tuple[str | None, ...] = (None,)
    if u.provider == "aws" and u.orchestrator != "hyperpod":
        kinds = (None, "ec2-instance")
    purchases: list[dict[str, Any]] = []
    for term in ("1yr", "3yr"):
        for kind in kinds:
            purchase: dict[str, Any] = {
                "savings_plan": term,
                "savings_plan_coverage": 1.0,
                "commitment": "buy",
            }
            if kind is not None:
                purchase["savings_plan_kind"] = kind
            purchases.append(purchase)
    missed: list[str] = []
    best = _cheapest(price, (
        (p, functools.partial(_variant, plan, {"purchase": p}),
         _not_priced(f"{p['savings_plan']} Savings Plan", first_clause=True))
        for p in purchases
    ), missed)  # fmt: skip
    notes.extend(_one_note_per_reason(missed))
    if best is None:
        return None
    purchase, alt = best
    term = str(purchase["savings_plan"])
    name = commitment_name(alt.usage)
    # Billed every hour of the term; not read off the unused-term line, which is absent when the
    # run fills whole terms exactly.
    hourly = float(discount_driver.hourly_commitment(alt.usage, catalog))
    caveat = (
        f"commits ${hourly:,.2f}/h for the whole {term} term, billed whether used or not (the "
        "unused term is priced); it pays only while the run, or other work on these instances, "
        "fills the term"
    )
    title = f"Buy a {name} covering the on-demand nodes"
    change = {f"purchase.{k}": v for k, v in purchase.items()}
    return _action("savings_plan", fc, alt, title, caveat, change)


_NO_RATE = re.compile(r"^(\w+) Savings Plan: no published \1 (.+?) rate for (.+)$")


def _one_note_per_reason(notes: list[str]) -> list[str]:
    """Savings Plan notes that differ only in term and kind said once (issue #42: four
    near-identical sentences): "Savings Plans (1yr and 3yr; Compute Savings Plan and EC2
    Instance Savings Plan): no published rate for p5.48xlarge (aws, us-east-1) on 2025-05-01"."""
    matches = [_NO_RATE.match(n) for n in notes]
    if len(notes) < 2 or not all(matches):
        return notes
    found = [m for m in matches if m is not None]
    if len({m.group(3) for m in found}) != 1:
        return notes
    terms = " and ".join(dict.fromkeys(m.group(1) for m in found))
    kinds = " and ".join(dict.fromkeys(m.group(2) for m in found))
    return [f"Savings Plans ({terms}; {kinds}): no published rate for {found[0].group(3)}"]


def _no_savings_plan_action(plan: Plan, fc: Forecast, price: Pricer) -> Action | None:
    """A commitment bought for this run whose whole term costs more than the run saves: the
    action is not to buy it (the same plan on demand), with what the term costs and what to do
    instead. It is an action only where it saves (``MIN_SAVING_USD``): a run that fills its
    term keeps its commitment."""
    try:
        dropped = {"purchase": ("savings_plan_coverage", "savings_plan_family")}
        alt = price(_variant(plan, {"purchase": {"savings_plan": "none"}}, drop=dropped))
    except TrainbillError:
        return None
    name = commitment_name(fc.usage)
    term_usd = sum(ln.cost_usd for ln in fc.ledger.in_category("discount") if ln.after_run)
    title = f"Do not buy a {name} for this single run: run the on-demand nodes on demand"
    caveat = (
        f"a commitment bought for one run is billed every hour of its term, used or not (its "
        f"unused term here: ${term_usd:,.0f}); buy one for a steady baseline ('trainbill "
        "commit'), or, if your organisation already holds one that covers these instances, "
        "price the run with --savings-plan-covered"
    )
    return _action("no_savings_plan", fc, alt, title, caveat, {"purchase.savings_plan": "none"})


def region_action(
    plan: Plan, fc: Forecast, catalog: Catalog, price: Pricer, notes: list[str]
) -> Action | None:
    """The cheapest other region of the same cloud with its own price for the instance."""
    u = fc.usage
    inst = u.instance.instance
    options = ["on_demand"] + (["spot"] if u.purchase.spot_fraction > 0 else [])
    priced = [
        r
        for r in sorted(catalog.regions(u.provider) - {u.region})
        if all(
            any(
                p.effective_from <= u.as_of
                for p in catalog.history(inst, o, provider=u.provider, region=r)
            )
            for o in options
        )
    ]
    best = _cheapest(
        price,
        (
            (
                r,
                functools.partial(
                    _variant, plan, {"cluster": {"region": r}}, drop={"cluster": ("zone",)}
                ),
                _not_priced(f"region {r}"),
            )
            for r in priced
        ),
        notes,
    )
    if best is None:
        notes.append(
            f"region: the catalog prices {inst} in no other {u.provider} region on {u.as_of}"
        )
        return None
    r, alt = best
    moved = (
        f"moves the run to {r}: the dataset and checkpoints must be there (copying them is not "
        f"priced), and quota and capacity for {u.nodes} × {inst} there"
    )
    parts = [moved]
    parts.extend(c.text for c in alt.cautions_of(CautionKind.REFERENCE_REGION))
    return _action(
        "region",
        fc,
        alt,
        f"Run in {r} instead of {u.region}",
        "; ".join(parts),
        {"cluster.region": r},
    )


def zone_action(plan: Plan, fc: Forecast, catalog: Catalog, price: Pricer) -> Action | None:
    """The zone of the plan's region with the cheapest spot price (on-demand is the same in every
    zone)."""
    u = fc.usage
    zones = catalog.zones(u.provider, u.region)
    if u.purchase.spot_fraction <= 0 or not zones:
        return None
    inst = u.instance.instance
    priced = [
        z
        for z in zones
        if z != u.zone_id
        and catalog.zone_price(inst, "spot", provider=u.provider, zone=z, as_of=u.as_of) is not None
    ]
    best = _cheapest(
        price,
        ((z, functools.partial(_variant, plan, {"cluster": {"zone": z}}), None) for z in priced),
        [],
    )
    if best is None:
        return None
    z, alt = best
    point = catalog.zone_price(inst, "spot", provider=u.provider, zone=z, as_of=u.as_of)
    assert point is not None  # only zones with a spot price were tried
    usd = point.usd
    dated = f" of {point.effective_from}"
    caveat = (
        f"spot prices differ by zone and move: ${usd:,.2f}/h is the {z} price{dated}; every spot "
        f"node must launch in {z}, where {u.nodes * u.purchase.spot_fraction:g} × {inst} may not "
        "be free"
    )
    return _action(
        "zone", fc, alt, f"Run in zone {z} (spot ${usd:,.2f}/h)", caveat, {"cluster.zone": z}
    )


def rank_actions(actions: list[Action | None]) -> tuple[Action, ...]:
    """The actions that save at least ``MIN_SAVING_USD``, largest saving first."""
    kept = [
        a
        for a in actions
        if a is not None and a.saving_usd >= MIN_SAVING_USD and math.isfinite(a.saving_usd)
    ]
    return tuple(sorted(kept, key=lambda a: (-a.saving_usd, a.kind)))
