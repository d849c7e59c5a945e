"""Which cluster, where: instance and node count, TPU slices, commitment kind and SageMaker
prices, region and zone.

Every look-up of a name the plan gave (instance, GPU, region, zone) lives here and raises an
error naming the plan's field with the catalog's "did you mean", before any quantity is worked
out (``job.resolve_job`` calls these first).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import TypeVar

from trainbill.catalog import PROVIDERS, Catalog, Instance, PricePoint
from trainbill.errors import PriceNotFoundError, SpecError, suggest
from trainbill.spec import ORCHESTRATORS, Plan, orchestrator_on


def instance_for_gpu(catalog: Catalog, accelerator: str, provider: str) -> Instance:
    """The instance a plan naming only a GPU runs on: the provider's largest instance holding it
    (training wants whole nodes), else any cloud's; one that can be rented on demand first
    (p5e/H200 has no On-Demand SKU).

    Raises:
        PriceNotFoundError: no instance in the catalog holds the accelerator.
    """
    options = catalog.instances_with(accelerator, provider) or catalog.instances_with(accelerator)
    priced = {p.item for p in catalog.prices if p.option == "on_demand"}
    options = tuple(i for i in options if i.instance in priced) or options
    if not options:
        msg = f"no instance in the catalog holds {accelerator!r}"
        raise PriceNotFoundError(msg)
    return options[0]


def resolve_cluster(plan: Plan, catalog: Catalog) -> tuple[Instance, int]:
    """Pick the instance and node count from ``instance``/``nodes`` or ``gpu``/``gpus``.

    With only a GPU named, the provider's largest instance holding it is chosen (training wants
    whole nodes); with only a GPU count, nodes = ceil(gpus / GPUs per node).
    """
    c = plan.cluster
    if c.instance is not None:
        inst = _named(lambda: catalog.instance(str(c.instance)), "cluster.instance")
        if inst.provider != c.provider:
            msg = f"instance {inst.instance!r} is a {inst.provider} instance, not {c.provider}"
            raise SpecError(msg, field="cluster.provider")
        if c.gpu is not None and catalog.accelerator(c.gpu).id != inst.accelerator:
            msg = f"instance {inst.instance!r} holds {inst.accelerator}, not {c.gpu!r}"
            raise SpecError(msg, field="cluster.gpu")
    else:
        assert c.gpu is not None
        accel = _named(lambda: catalog.accelerator(str(c.gpu)), "cluster.gpu")
        inst = instance_for_gpu(catalog, accel.id, c.provider)
    if c.nodes is not None:
        nodes = c.nodes
    else:
        assert c.gpus is not None
        nodes = math.ceil(c.gpus / inst.accelerator_count)
    return inst, nodes


_T = TypeVar("_T")


def _named(look_up: Callable[[], _T], field: str) -> _T:
    """A catalog look-up of a name the plan gave, its miss an error naming the plan's field
    (the API's 422 carries it; the CLI prefixes it), with the catalog's "did you mean"."""
    try:
        return look_up()
    except PriceNotFoundError as exc:
        raise SpecError(str(exc), field=field) from None


def tpu_slice_sizes(catalog: Catalog, inst: Instance, limit: int) -> tuple[int, ...] | None:
    """The chip counts a TPU is sold in (``defaults.cluster.tpu_slice_chips``: the provider's
    single-slice shapes, then Multislice as whole multiples of the largest), up to ``limit``;
    None for a machine billed per instance, or a TPU the table does not list.

    Google sells TPUs by slice shape (v6e: 1, 4, 8, ..., 256 chips), so a cluster of 362 or
    1,448 chips is not something a user can create: sizing and the planner pick from these."""
    table = catalog.table("defaults.cluster.tpu_slice_chips")
    if inst.billing != "chip" or table is None or inst.accelerator not in table:
        return None
    singles = sorted({int(c) for c in table[inst.accelerator]})
    largest = singles[-1]
    multi = range(2 * largest, limit + 1, largest)
    return tuple(c for c in (*singles, *multi) if c <= limit)


def nearest_slice(sizes: Sequence[int], chips: float) -> int:
    """The sold size nearest ``chips`` on a log scale (a √2 sweep step lands between two)."""
    return min(sizes, key=lambda c: (abs(math.log(c / chips)), c))


def instance_family(instance: str) -> str:
    """The family an EC2 Instance Savings Plan is bought for: ``p5`` of ``p5.48xlarge``."""
    return instance.split(".", 1)[0]


def _savings_plan_kind(
    plan: Plan, inst: Instance, provider: str, orchestrator: str, region: str
) -> str:
    """Which AWS Savings Plan kind prices the commitment, checked against what it covers.

    Default: "sagemaker" under HyperPod (its nodes are SageMaker ``ml.*`` usage) and "compute"
    otherwise (the one kind that covers any family in any region, Trainium included). A kind
    that cannot cover the plan's usage is an error naming the kind that would: an EC2 Instance
    plan bought for another family is exactly how "switching to Trainium loses the discount".
    """
    p = plan.purchase
    if provider != "aws":
        if p.savings_plan_kind is not None or p.savings_plan_family is not None:
            field = (
                "purchase.savings_plan_kind"
                if p.savings_plan_kind is not None
                else "purchase.savings_plan_family"
            )
            msg = (
                f"AWS Savings Plan settings do not apply on {provider}: its commitment is priced "
                "from the catalog's sp_1yr/sp_3yr rate (committed-use discount or reservation); "
                f"remove {field}"
            )
            raise SpecError(msg, field=field)
        return ""
    sagemaker = orchestrator == "hyperpod"
    kind = p.savings_plan_kind or ("sagemaker" if sagemaker else "compute")
    if sagemaker and kind != "sagemaker":
        msg = (
            f"a {kind} Savings Plan does not cover SageMaker HyperPod (ml.* instances are "
            'SageMaker usage); a SageMaker Savings Plan would: savings_plan_kind = "sagemaker"'
        )
        raise SpecError(msg, field="purchase.savings_plan_kind")
    if not sagemaker and kind == "sagemaker":
        msg = (
            f"a SageMaker Savings Plan covers only SageMaker ml.* usage, not {orchestrator} "
            'instances; a Compute Savings Plan would (savings_plan_kind = "compute"), or '
            '"ec2-instance" for one family'
        )
        raise SpecError(msg, field="purchase.savings_plan_kind")
    family = p.savings_plan_family
    if family is not None and kind != "ec2-instance":
        msg = (
            f'savings_plan_family applies only to savings_plan_kind = "ec2-instance" (got {kind!r})'
        )
        raise SpecError(msg, field="purchase.savings_plan_family")
    own = instance_family(inst.instance)
    if family is not None and family != own and p.savings_plan != "none":
        msg = (
            f"an EC2 Instance Savings Plan for the {family} family does not cover {inst.instance} "
            f"({own} family, {region}); a Compute Savings Plan would (savings_plan_kind = "
            '"compute" covers any family in any region)'
        )
        raise SpecError(msg, field="purchase.savings_plan_family")
    return kind


def sagemaker_price(
    catalog: Catalog, instance: str, *, provider: str, region: str, as_of: date
) -> PricePoint | None:
    """The SageMaker ``ml.<instance>`` on-demand price HyperPod bills on ``as_of``: the catalog's
    own point, else one derived from another ``ml.*`` price by the EC2 price ratio, else None.

    Why this derivation. No provider-published ml.* table was found for every instance
    (``ml.p5en``, ``ml.trn1`` are missing); the pairs that were found all sit at about 1.15 ×
    EC2, but that ratio is read off third-party copies, so it is not used as a constant. What
    is provider data is the EC2 price list, so a missing ml.X is the anchor's ml.A price scaled
    by EC2's own price ratio on the same day: ml.X = ml.A × EC2(X) ÷ EC2(A)
    (``orchestration.sagemaker_anchor`` names A), for an accelerated instance of the catalog
    only (a CPU head node is not priced in a GPU node's proportion). It assumes SageMaker
    prices the two instances in EC2's proportion, which no provider document states, so the
    point is marked
    ``UNVERIFIED`` and its source shows both prices, their dates and the arithmetic.
    """
    item = f"ml.{instance}"
    own = catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of)
    if own is not None or provider != "aws":
        return own
    anchor = str(catalog.value("orchestration.sagemaker_anchor"))
    inst = catalog.instances.get(instance)
    if anchor == instance or inst is None or inst.stand_in or inst.accelerator_count < 1:
        return None  # a head or CPU node is not priced like an accelerated anchor

    def on_demand(item: str) -> PricePoint | None:
        return catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of)

    ml_a, ec2_a, ec2_x = on_demand(f"ml.{anchor}"), on_demand(anchor), on_demand(instance)
    if ml_a is None or ec2_a is None or ec2_x is None or ec2_x.stand_in or ec2_a.usd <= 0:
        return None
    usd = ml_a.usd * ec2_x.usd / ec2_a.usd
    source = (
        f"DERIVED, UNVERIFIED (no published {item} price in the catalog): ml.{anchor} "
        f"${ml_a.usd:,.6g} × EC2 {instance} ${ec2_x.usd:,.6g} ÷ EC2 {anchor} ${ec2_a.usd:,.6g} = "
        f"${usd:,.6g}/h, i.e. SageMaker taken to price the two instances in the EC2 price "
        f"list's proportion ({catalog.assumption('orchestration.sagemaker_anchor').source}); "
        f"ml.{anchor}: {ml_a.cite()}; EC2 {instance}: {ec2_x.cite()}; EC2 {anchor}: "
        f"{ec2_a.cite()}"
    )
    return PricePoint(
        provider=provider,
        region=ml_a.region,
        item=item,
        option="on_demand",
        unit=ml_a.unit,
        usd=usd,
        effective_from=max(ml_a.effective_from, ec2_a.effective_from, ec2_x.effective_from),
        source=source,
        stands_in_for=ml_a.stands_in_for,
    )


def hyperpod_spot_from(catalog: Catalog) -> date:
    """The first day a HyperPod cluster could run Spot nodes (``orchestration.hyperpod_spot_from``,
    the provider's dated document): before it, HyperPod instance groups were on-demand only."""
    return date.fromisoformat(str(catalog.value("orchestration.hyperpod_spot_from")))


def hyperpod_spot_note(
    catalog: Catalog, orchestrator: str, spot: float, run_date: date
) -> tuple[str, ...]:
    """The dated HyperPod Spot rule, said where it changes the plan: a HyperPod run dated before
    Spot was offered is priced with every node on demand (what it could have bought), not
    refused."""
    if orchestrator != "hyperpod" or spot <= 0 or run_date >= hyperpod_spot_from(catalog):
        return ()
    a = catalog.assumption("orchestration.hyperpod_spot_from")
    note = (
        f"purchase.spot_fraction = {spot:g} on HyperPod, but the run is dated "
        f"{run_date.isoformat()}, before HyperPod offered Spot ({a.value}: {a.source}): every "
        "node is priced on demand at the ml.* rate; date the run on or after "
        f"{a.value} to use Spot on HyperPod"
    )
    return (note,)


def hyperpod_unpriced(
    catalog: Catalog,
    inst: Instance,
    orchestrator: str,
    spot: float,
    provider: str,
    region: str,
    as_of: date,
) -> tuple[str, ...]:
    """What HyperPod's bill cannot price from published figures, said rather than guessed: a
    forecast warns with it, and the planner and the orchestrator comparison do not rank a
    HyperPod cluster whose premium is missing against priced ones as if it were free.

    ``spot`` is the share actually run on Spot (zero before HyperPod offered it,
    ``hyperpod_spot_note``)."""
    if orchestrator != "hyperpod":
        return ()
    out: list[str] = []
    ml = f"ml.{inst.instance}"
    if (
        sagemaker_price(catalog, inst.instance, provider=provider, region=region, as_of=as_of)
        is None
    ):
        anchor = catalog.value("orchestration.sagemaker_anchor")
        out.append(
            f"no published SageMaker {ml} price in the catalog on {as_of}, and none derivable "
            f"from ml.{anchor} by the EC2 price ratio: HyperPod nodes are priced at the EC2 "
            f"{inst.instance} rate and the ml.* premium is not included; add an {ml} on_demand "
            "price point (--catalog DIR) from the SageMaker pricing page"
        )
    if spot > 0:
        a = catalog.assumption("orchestration.hyperpod_spot")
        out.append(
            f"purchase.spot_fraction = {spot:g} on HyperPod: {a.value} ({a.source}); no published "
            "HyperPod Spot rate in the catalog, so spot nodes are priced at the EC2 Spot rate"
        )
    return tuple(out)


#: How each cloud spells a region (AWS: ``us-east-1``, ``us-gov-west-1``; Google Cloud:
#: ``us-central1``, ``northamerica-northeast1``; Azure: ``eastus2``, ``westeurope``): a name
#: that cannot be one (``mars-1`` on AWS, an empty string) is a typo, not a new region.
_REGION_SHAPE = {
    "aws": re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+$"),
    "gcp": re.compile(r"^[a-z]+-[a-z]+\d+$"),
    "azure": re.compile(r"^[a-z][a-z0-9]+$"),
}


def check_region(
    catalog: Catalog, provider: str, region: str, *, field: str = "cluster.region"
) -> None:
    """A region that cannot be the provider's (misspelt, empty, or one the catalog knows only
    for another cloud: ``us-central1`` on AWS) is a mistake, not a region without local prices:
    refuse it rather than price the reference region.

    A well-formed region the catalog does not know is still priced at the provider's reference
    region, with a warning (new regions appear before the catalog learns them).
    """
    own = catalog.regions(provider)
    known = ", ".join(sorted(own)) or "none"
    others = [c for c in PROVIDERS if c != provider and region in catalog.regions(c)]
    if others and region not in own:
        msg = (
            f"{region!r} is a {others[0]} region, not {provider}; {provider} regions in the "
            f"catalog: {known}"
        )
        raise SpecError(msg, field=field)
    shape = _REGION_SHAPE.get(provider)
    if shape is not None and not shape.match(region) and region not in own:
        msg = f"{region!r} is not a region name of {provider}; its regions in the catalog: {known}"
        raise SpecError(msg, field=field)


def _orchestrator_on(plan: Plan, provider: str) -> str:
    """The plan's orchestrator on the cloud the instance belongs to.

    The plan validator resolved it for ``cluster.provider``; a plan naming only a GPU may land
    on another cloud (``gpu = "tpu-v6e"`` is a GCP chip), where self-managed VMs are called
    "vm" and AWS services do not exist.
    """
    offered = ORCHESTRATORS[provider]
    orchestrator = orchestrator_on(provider, plan.cluster.orchestrator)
    if orchestrator not in offered:
        msg = (f"{orchestrator!r} is an AWS service, but the plan's GPU runs on {provider}; "
               f"allowed values for {provider}: {', '.join(offered)}")  # fmt: skip
        raise SpecError(msg, field="cluster.orchestrator")
    return orchestrator


def _zone_letters(count: int) -> tuple[str, ...]:
    """AWS AZ name suffixes: a region with N zones names them a, b, ... (AWS 'AWS Availability
    Zones': the code of a zone is its region code followed by a letter)."""
    return tuple(chr(ord("a") + i) for i in range(count))


def resolve_zone(
    catalog: Catalog, provider: str, region: str, zone: str, field: str
) -> tuple[str | None, str]:
    """Check ``zone`` against the region's zones; return its zone ID (None where only an
    account-specific AWS AZ name was given) and a note for the reader ("" when none).

    Raises:
        SpecError: the zone is not one of the region's (the message lists them).
    """
    known = catalog.zones(provider, region)
    if known is None:
        listed = sorted(
            {k.split(".")[2] for k in catalog.assumptions if k.startswith(f"zones.{provider}.")}
        )
        note = (
            f"{field} = {zone!r} not checked: the catalog lists no zones for {provider} {region} "
            f"(zones are listed for {', '.join(listed) or 'no region'})"
        )
        return None, note
    if zone in known:
        return zone, ""
    names = tuple(f"{region}{c}" for c in _zone_letters(len(known))) if provider == "aws" else ()
    if zone in names:
        note = (
            f"{field} = {zone!r} is an AZ name, which AWS maps to a physical zone per account: "
            f"zone-level prices need its AZ ID ({', '.join(known)}; see 'aws ec2 "
            "describe-availability-zones')"
        )
        return None, note
    where = catalog.zone_region(provider, zone)
    hint = f" ({zone!r} is in {where})" if where is not None else suggest(zone, (*known, *names))
    allowed = ", ".join((*known, *names))
    msg = f"{zone!r} is not a zone of {provider} {region}.{hint} Allowed: {allowed}"
    raise SpecError(msg, field=field)
