"""The candidate space: which instances, orchestrators, node counts, purchase mixes and
checkpoint intervals the planner tries, and the plan each point stands for.

Kept apart from the pricing so what is *searched* (and refused as bad input) can be read, and
changed, without reading how a grid is priced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date

from trainbill._record import record
from trainbill.catalog import PROVIDERS, Catalog, Instance
from trainbill.errors import SpecError, suggest
from trainbill.spec import (
    MAX_HOURS,
    MAX_NODES,
    ORCHESTRATORS,
    Plan,
    orchestrator_on,
    plan_from_dict,
)
from trainbill.usage import (
    Usage,
    instance_family,
    nearest_slice,
    resolve_cluster,
    tpu_slice_sizes,
)


@record
class SearchSpace:
    """The grid to search. ``None`` axes are derived from the plan and catalog.

    Attributes:
        instances: instance types; None = every instance of the allowed clouds with a price.
        nodes: node counts (chips for per-chip TPUs); None = GPU counts from 1/8× to 8× the
            plan's in √2 steps, converted to nodes per instance.
        spot_fractions: shares of nodes on spot.
        savings_plans: commitment terms to consider ("1yr", "3yr"); None = the plan's own term.
        coverages: Savings Plan coverage levels tried for each term.
        orchestrators: tried where the provider offers them (see ``ORCHESTRATORS``).
        checkpoint_intervals_hours: checkpoint intervals.
    """

    instances: tuple[str, ...] | None = None
    nodes: tuple[int, ...] | None = None
    spot_fractions: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
    savings_plans: tuple[str, ...] | None = None
    coverages: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
    orchestrators: tuple[str, ...] = ("ec2", "hyperpod", "eks")
    checkpoint_intervals_hours: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0)


def own_mix_space(usage: Usage, nodes: tuple[int, ...] | None = None) -> SearchSpace:
    """The grid that varies only the node count: the plan's instance, spot share, commitment,
    orchestrator and checkpoint interval held fixed (right-sizing, the report and the headline)."""
    defaults = SearchSpace()
    return SearchSpace(
        instances=(usage.instance.instance,),
        nodes=nodes,
        spot_fractions=(usage.purchase.spot_fraction,),
        savings_plans=(usage.purchase.savings_plan,),
        coverages=(usage.purchase.savings_plan_coverage,)
        if usage.purchase.savings_plan != "none"
        else defaults.coverages,
        orchestrators=(usage.orchestrator,),
        checkpoint_intervals_hours=(usage.checkpoint.interval_hours,)
        if usage.checkpoint.interval_hours > 0
        else defaults.checkpoint_intervals_hours,
    )


def _scaled_hours(
    plan: Plan, catalog: Catalog, inst: Instance, nodes: int, ref: float | None = None
) -> float | None:
    """run.hours scaled by GPU count × peak throughput (None when the time model derives it);
    ``ref``: the plan's own GPUs × peak (``_reference_peak``), when the caller has it."""
    if plan.run.hours is None:
        return None
    prec = plan.model.precision
    ref = _reference_peak(plan, catalog) if ref is None else ref
    new = nodes * inst.accelerator_count * catalog.accelerator(inst.accelerator).peak_tflops(prec)
    return plan.run.hours * ref / new


def _reference_peak(plan: Plan, catalog: Catalog) -> float:
    """The plan's own cluster's GPUs × dense peak at its precision: what stated hours scale by."""
    ref_inst, ref_nodes = resolve_cluster(plan, catalog)
    peak = catalog.accelerator(ref_inst.accelerator).peak_tflops(plan.model.precision)
    return ref_nodes * ref_inst.accelerator_count * peak


def candidate_plan(
    plan: Plan,
    catalog: Catalog,
    *,
    instance: str,
    nodes: int,
    orchestrator: str,
    spot_fraction: float,
    savings_plan: str,
    savings_plan_coverage: float,
    checkpoint_interval_hours: float,
    region: str | None = None,
    savings_plan_kind: str = "",
) -> Plan:
    """The user's plan with the searched fields replaced (validated, ready to write as TOML).

    Everything else (model, storage, data, network, reliability, prices) is kept. A region is
    kept only when the provider is unchanged; otherwise the provider's reference region is used.
    """
    inst = catalog.instance(instance)
    data = plan.model_dump(mode="json", exclude_none=True)
    cluster = {
        k: v for k, v in data.get("cluster", {}).items() if k not in {"gpu", "gpus", "region"}
    }
    same_provider = inst.provider == plan.cluster.provider
    cluster.update(
        provider=inst.provider, instance=instance, nodes=nodes, orchestrator=orchestrator
    )
    if region is not None:
        cluster["region"] = region
    elif same_provider and plan.cluster.region is not None:
        cluster["region"] = plan.cluster.region
    data["cluster"] = cluster
    kept = _commitment_kept(plan, catalog, inst, orchestrator)
    if savings_plan_kind and savings_plan != "none":  # a searched kind replaces the plan's
        kept.pop("savings_plan_family", None)
        kept["savings_plan_kind"] = savings_plan_kind
    data["purchase"] = {
        **kept,
        "spot_fraction": spot_fraction,
        "savings_plan": savings_plan,
        "savings_plan_coverage": savings_plan_coverage if savings_plan != "none" else 0.0,
    }
    data.setdefault("checkpoint", {})["interval_hours"] = checkpoint_interval_hours
    hours = _scaled_hours(plan, catalog, inst, nodes)
    if hours is not None:
        data.setdefault("run", {})["hours"] = hours
    return plan_from_dict(data, source="optimizer candidate")


def _commitment_kept(
    plan: Plan, catalog: Catalog, inst: Instance, orchestrator: str
) -> dict[str, str]:
    """The plan's commitment settings a candidate keeps: whose commitment always; the kind and
    family only where they still cover the candidate (same cloud, HyperPod or not, same family),
    else the candidate uses the default kind for its orchestrator (``trainbill.usage``)."""
    p = plan.purchase
    out: dict[str, str] = {} if p.commitment is None else {"commitment": p.commitment}
    if p.savings_plan_kind is None or inst.provider != "aws":
        return out
    if (p.savings_plan_kind == "sagemaker") != (orchestrator == "hyperpod"):
        return out
    if p.savings_plan_kind == "ec2-instance":
        family = p.savings_plan_family or instance_family(
            resolve_cluster(plan, catalog)[0].instance
        )
        if family != instance_family(inst.instance):
            return out
    out["savings_plan_kind"] = p.savings_plan_kind
    if p.savings_plan_family is not None:
        out["savings_plan_family"] = p.savings_plan_family
    return out


def uncovered_by_held(plan: Plan, catalog: Catalog, inst: Instance) -> str | None:
    """Why the commitment the plan already holds (``purchase.commitment = "existing"``) does not
    cover ``inst``, or None. An EC2 Instance Savings Plan applies to one instance family in one
    region (AWS Savings Plans user guide, "Savings Plans types"): a p5 plan held does not cover
    trn1, so a candidate on trn1 is priced without it, which is how "switching to Trainium loses
    the discount" is computed rather than claimed. A Compute Savings Plan covers any family."""
    p = plan.purchase
    if p.commitment != "existing" or p.savings_plan == "none":
        return None
    if p.savings_plan_kind != "ec2-instance" or inst.provider != "aws":
        return None
    family = p.savings_plan_family or instance_family(resolve_cluster(plan, catalog)[0].instance)
    if family == instance_family(inst.instance):
        return None
    return (
        f"the {p.savings_plan} EC2 Instance Savings Plan held covers the {family} family only, "
        f"not {inst.instance}: priced without it; a Compute Savings Plan would cover it"
    )


@record
class _SpOption:
    term: str
    coverage: float
    #: The AWS Savings Plan kind searched ("compute", "ec2-instance"); "" = the plan's own.
    kind: str = ""


#: The kinds ``optimize --savings-plans`` searches on AWS: a Compute Savings Plan (any family,
#: Trainium included) and an EC2 Instance Savings Plan (one family in one region, deeper).
SEARCHED_KINDS = ("compute", "ec2-instance")


@record
class _Axes:
    nodes: tuple[int, ...]
    orchestrators: tuple[str, ...]
    intervals: tuple[float, ...]
    spots: tuple[float, ...]
    sp: tuple[_SpOption, ...]


def _sorted_unique(values: Iterable[float]) -> tuple[float, ...]:
    return tuple(sorted({float(v) for v in values}))


def _default_nodes(plan: Plan, catalog: Catalog, inst: Instance) -> tuple[int, ...]:
    ref_inst, ref_nodes = resolve_cluster(plan, catalog)
    gpus = ref_nodes * ref_inst.accelerator_count
    targets = [gpus * 2.0 ** (k / 2.0) for k in range(-6, 7)]
    slices = tpu_slice_sizes(catalog, inst, MAX_NODES)
    if slices is not None:  # a TPU is sold by slice: the sold size nearest each step
        return tuple(sorted({nearest_slice(slices, g / inst.accelerator_count) for g in targets}))
    # Capped at the plan schema's node limit: a candidate past it is not a valid plan.
    return tuple(
        sorted({min(MAX_NODES, max(1, round(g / inst.accelerator_count))) for g in targets})
    )


def _validate(
    deadline_hours: float | None,
    budget_usd: float | None,
    clouds: Sequence[str] | None,
    space: SearchSpace,
) -> tuple[str, ...] | None:
    if deadline_hours is not None and not deadline_hours > 0:
        msg = f"deadline must be > 0 hours (got {deadline_hours:g})"
        raise SpecError(msg, field="deadline_hours")
    if budget_usd is not None and not budget_usd > 0:
        msg = f"budget must be > 0 USD (got {budget_usd:g})"
        raise SpecError(msg, field="budget_usd")
    allowed = _validate_clouds(clouds)
    _validate_space(space)
    return allowed


def _validate_clouds(clouds: Sequence[str] | None) -> tuple[str, ...] | None:
    """The clouds to search (None: the plan's own), each one a provider trainbill prices."""
    allowed = tuple(clouds) if clouds is not None else None
    if allowed is not None and not allowed:
        msg = f"no cloud given; allowed values: {', '.join(PROVIDERS)}"
        raise SpecError(msg, field="clouds")
    for c in allowed or ():
        if c not in PROVIDERS:
            msg = (
                f"unknown cloud {c!r}.{suggest(c, PROVIDERS)} "
                f"Allowed values: {', '.join(PROVIDERS)}"
            )
            raise SpecError(msg, field="clouds")
    return allowed


def _validate_space(space: SearchSpace) -> None:
    """Every axis of the search space within what it can mean, else the axis named."""
    for name, values, lo, hi in (
        ("spot_fractions", space.spot_fractions, 0.0, 1.0),
        ("coverages", space.coverages, 0.0, 1.0),
    ):
        if any(not lo <= v <= hi for v in values):
            msg = f"values must lie in [{lo:g}, {hi:g}] (got {list(values)})"
            raise SpecError(msg, field=f"space.{name}")
    if any(not 0 < v <= MAX_HOURS for v in space.checkpoint_intervals_hours):
        # The plan's own cap (checkpoint.interval_hours): each interval becomes a candidate
        # plan, and 1e308 h overflowed the grid's arithmetic into silently dropped points.
        msg = (
            f"checkpoint intervals must be > 0 and at most {MAX_HOURS:,.0f} hours (got "
            f"{list(space.checkpoint_intervals_hours)})"
        )
        raise SpecError(msg, field="space.checkpoint_intervals_hours")
    if space.nodes is not None and any(not 1 <= n <= MAX_NODES for n in space.nodes):
        # The plan's own cap (cluster.nodes): each node count becomes a candidate plan.
        msg = f"node counts must be from 1 to {MAX_NODES:,} (got {list(space.nodes)})"
        raise SpecError(msg, field="space.nodes")
    for term in space.savings_plans or ():
        if term not in {"none", "1yr", "3yr"}:
            msg = f"unknown Savings Plan term {term!r}; allowed values: none, 1yr, 3yr"
            raise SpecError(msg, field="space.savings_plans")
    known = {o for offered in ORCHESTRATORS.values() for o in offered}
    for orch in space.orchestrators:
        if orch not in known:
            msg = f"unknown orchestrator {orch!r}; allowed values: {', '.join(sorted(known))}"
            raise SpecError(msg, field="space.orchestrators")


def _stand_in_reason(inst: Instance, catalog: Catalog, region: str, as_of: date) -> str | None:
    """Why an instance is a stand-in (not sold as the catalog prices it), or None.

    Either the instance itself is a catalog stand-in (an H800 node no cloud lists) or the
    on-demand price the search would use is (trn2.48xlarge has no On-Demand SKU).
    """
    if inst.stand_in:
        return f"catalog stand-in, not an instance a cloud sells ({inst.source})"
    point = catalog.find_price(
        inst.instance, "on_demand", provider=inst.provider, region=region, as_of=as_of
    )
    if point is not None and point.stand_in:
        return f"its on-demand price is a catalog stand-in, not a published price ({point.source})"
    return None


def search_instances(
    plan: Plan,
    catalog: Catalog,
    space: SearchSpace,
    clouds: tuple[str, ...] | None,
    *,
    allow_stand_ins: bool,
    today: date | None,
) -> tuple[list[Instance], list[str]]:
    """The instances to search, and a note for each one left out (``optimize``; the web app
    sizes a search with it before running it).

    Named instances are searched exactly as named (a stand-in among them needs
    ``allow_stand_ins``): the plan as written is still compared (``optimize``'s user candidate),
    but its instance is not searched over the grid unless named. Otherwise named clouds are
    searched whole; with no clouds named, only the plan's own cloud and accelerator vendor (the
    family its code already runs on). Stand-ins are left out unless ``allow_stand_ins``; the
    plan's own instance is then always searched.
    """
    user_inst, _ = resolve_cluster(plan, catalog)
    as_of = plan.prices.as_of or today or date.today()  # noqa: DTZ011 - a calendar date, not a time

    def region_of(inst: Instance) -> str:
        same = inst.provider == plan.cluster.provider and plan.cluster.region is not None
        return str(plan.cluster.region) if same else catalog.reference_region(inst.provider)

    notes: list[str] = []
    if space.instances is not None:
        out = [catalog.instance(name) for name in space.instances]
        if not allow_stand_ins:
            for inst in out:
                why = _stand_in_reason(inst, catalog, region_of(inst), as_of)
                if why is not None and inst.instance != user_inst.instance:
                    msg = f"{inst.instance}: {why}; pass --allow-stand-ins to search it anyway"
                    raise SpecError(msg, field="instances")
        if clouds is not None:
            out = [i for i in out if i.provider in clouds]
    elif clouds is not None:
        out = [i for i in catalog.instances.values() if i.provider in clouds]
    else:
        vendor = catalog.accelerator(user_inst.accelerator).vendor
        out = [
            i
            for i in catalog.instances.values()
            if i.provider == user_inst.provider
            and catalog.accelerator(i.accelerator).vendor == vendor
        ]
    if not allow_stand_ins:
        kept = []
        for inst in out:
            why = _stand_in_reason(inst, catalog, region_of(inst), as_of)
            if why is None or inst.instance == user_inst.instance:
                kept.append(inst)
            else:
                notes.append(
                    f"{inst.instance}: not searched ({why}; --allow-stand-ins to include it)"
                )
        out = kept
    out = _with_precision(out, catalog, plan.model.precision, user_inst, notes)
    if space.instances is None and user_inst.instance not in {i.instance for i in out}:
        out.append(user_inst)
    return out, notes


def _with_precision(
    out: list[Instance], catalog: Catalog, precision: str, user_inst: Instance, notes: list[str]
) -> list[Instance]:
    """The instances whose accelerator has a published peak at the plan's precision (TPUs have
    no FP32 figure), a note for each one left out; the plan's own instance is kept, and its
    forecast says why it cannot be priced at that precision."""
    kept = []
    for inst in out:
        acc = catalog.accelerator(inst.accelerator)
        if acc.precision_peak(precision) is not None or inst.instance == user_inst.instance:
            kept.append(inst)
        else:
            notes.append(
                f"{inst.instance}: not searched ({acc.id} has no published {precision} peak in "
                f"the catalog; it runs {', '.join(acc.precisions())})"
            )
    return kept


def _axes_for(
    plan: Plan,
    catalog: Catalog,
    space: SearchSpace,
    inst: Instance,
    chosen_interval: float | None = None,
) -> _Axes:
    """The search grid for one instance; ``chosen_interval`` is the checkpoint interval the user's
    plan is forecast with (stated, or the Young/Daly optimum), so the plan itself is a grid
    point."""
    user_inst, user_nodes = resolve_cluster(plan, catalog)
    is_user = inst.instance == user_inst.instance
    nodes = set(space.nodes if space.nodes is not None else _default_nodes(plan, catalog, inst))
    offered = ORCHESTRATORS[
        inst.provider
    ]  # offered[0]: self-managed VMs ("ec2" on AWS, "vm" elsewhere)
    named = [orchestrator_on(inst.provider, o) for o in space.orchestrators]
    orchs = [o for o in named if o in offered] or [offered[0]]
    if is_user:
        # The plan's own node count is a grid point of its instance; its orchestrator only if
        # named (the plan as written is compared whole as the user candidate either way).
        nodes.add(user_nodes)
    user_interval = (
        plan.checkpoint.interval_hours
        or chosen_interval
        or float(catalog.value("defaults.checkpoint.interval_hours"))
    )
    intervals = _sorted_unique([*space.checkpoint_intervals_hours, user_interval])
    spots = _sorted_unique([*space.spot_fractions, plan.purchase.spot_fraction])
    terms = (
        space.savings_plans if space.savings_plans is not None else (plan.purchase.savings_plan,)
    )
    sp = [_SpOption(term="none", coverage=0.0)]
    user_cov = plan.purchase.savings_plan_coverage
    for term in dict.fromkeys(terms):
        if term == "none":
            continue
        covs = set(space.coverages)
        if term == plan.purchase.savings_plan:
            covs.add(1.0 if user_cov is None else user_cov)
        # Searched terms on AWS try both kinds (the plan's own term keeps the plan's kind).
        searched = space.savings_plans is not None and inst.provider == "aws"
        kinds = SEARCHED_KINDS if searched else ("",)
        sp.extend(
            _SpOption(term=term, coverage=c, kind=k) for k in kinds for c in sorted(covs) if c > 0
        )
    return _Axes(
        nodes=tuple(sorted(nodes)),
        orchestrators=tuple(dict.fromkeys(orchs)),
        intervals=intervals,
        spots=spots,
        sp=tuple(sp),
    )


def _check_not_empty(space: SearchSpace) -> None:
    for name in ("spot_fractions", "checkpoint_intervals_hours", "orchestrators"):
        if not getattr(space, name):
            msg = "the search space is empty: give at least one value"
            raise SpecError(msg, field=f"space.{name}")
    if space.nodes is not None and not space.nodes:
        msg = "the search space is empty: give at least one node count"
        raise SpecError(msg, field="space.nodes")
    if space.instances is not None and not space.instances:
        msg = "the search space is empty: give at least one instance type"
        raise SpecError(msg, field="space.instances")
