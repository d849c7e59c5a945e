"""The caveats of a recommendation: what it changes against the user's plan beyond its price
(another accelerator, cloud or orchestrator, more nodes on spot, a stand-in price) and what its
price or deadline rests on, one sentence each.

Kept apart from the result records so a search's front can be noted in bulk: the caveats that
depend on a candidate's cluster (instance, region, cloud, orchestrator) are worked out once per
cluster, and only the candidates that put more nodes on spot than the plan or come near the
deadline get caveats of their own (``_Noter.many``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

import numpy as np

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog, Instance, SpotAdvisorRow
from trainbill.optimize.space import _stand_in_reason

#: What a recommendation changes that the price alone does not show (see ``Caveat``).
CaveatKind = Literal[
    "stand_in",
    "porting",
    "cloud",
    "orchestrator",
    "older_gpu",
    "memory",
    "spot_capacity",
    "reference_region",
    "deadline_risk",
]


@record
class Caveat:
    """Why a recommendation may not be a drop-in swap for the user's plan, in one sentence.

    ``kind``: ``stand_in`` (a catalog stand-in, not something a cloud sells), ``porting`` (another
    accelerator vendor: the code must be ported), ``cloud`` (another cloud: account, quotas,
    data), ``orchestrator`` (another orchestrator on the same cloud: another service to set up,
    its own quotas and commitments), ``older_gpu`` (an accelerator launched before the plan's),
    ``memory`` (less HBM per accelerator: the parallel layout must be re-tuned),
    ``spot_capacity`` (more nodes on spot than the plan: capacity at that size is not
    guaranteed), ``reference_region`` (its instance has no price point in its region: priced at
    the provider's reference region's),
    ``deadline_risk`` (meets the deadline on the expected wall-clock, not at its P90).
    """

    kind: CaveatKind
    text: str

    def as_dict(self) -> dict[str, str]:
        """JSON-ready fields."""
        return {"kind": self.kind, "text": self.text}


#: What moving the code to another accelerator vendor takes, by the vendor moved to.
_PORTING = {
    "google": "porting to TPU: the training code must run on JAX or PyTorch/XLA; CUDA kernels "
    "(FlashAttention, fused optimizers) and NCCL do not carry over",
    "aws": "porting to AWS Trainium: the training code must run on the Neuron SDK (PyTorch "
    "NeuronX or JAX); CUDA kernels do not carry over",
    "amd": "porting to AMD ROCm: PyTorch runs, but custom CUDA kernels need HIP ports and NCCL "
    "becomes RCCL",
    "nvidia": "porting to NVIDIA CUDA: the training code must leave its current accelerator's "
    "toolchain",
}


#: What moving a run to each orchestrator changes besides its price (the ``orchestrator``
#: caveat), as the ``cloud`` caveat says for a move between clouds.
_ORCHESTRATOR_SWITCH = {
    "hyperpod": (
        "a SageMaker HyperPod cluster (CreateCluster with lifecycle scripts, SageMaker ml.* "
        "instance quotas, not EC2's), billed as SageMaker ml.* usage: an EC2 Instance or Compute "
        "Savings Plan does not cover it (a SageMaker Savings Plan does), and Spot only from "
        "HyperPod's Spot support on"
    ),
    "eks": (
        "an EKS cluster with Karpenter node pools and a job operator to set up and keep "
        "upgraded (EKS control-plane hours, Kubernetes version support windows)"
    ),
    "ec2": (
        "self-managed instances: detecting a failed node, replacing it and restarting the job "
        "are the team's own work (no managed recovery)"
    ),
}

#: A cluster's caveats: (those listed before the spot-capacity one, those after it).
_ClusterCaveats = tuple[list[Caveat], list[Caveat]]


@dataclass(slots=True)
class _Noter:
    """The caveats of candidates against one user's plan, remembering what they share.

    ``user_spot_nodes``: the plan's nodes on spot (spot share × nodes); ``user_orchestrator``:
    the plan's orchestrator on its own cloud (None: no ``orchestrator`` caveat); ``deadline``:
    the search's (None: no ``deadline_risk`` caveat). ``memo`` keeps each cluster's caveats
    (instance, region, cloud, orchestrator) and ``spot_rows`` each (instance, cloud, region)'s
    spot interruption row, across the candidates of one result (a node sweep's front shows
    hundreds of one instance).
    """

    user_inst: Instance
    user_spot_nodes: float
    catalog: Catalog
    as_of: date
    deadline: float | None = None
    user_orchestrator: str | None = None
    memo: dict[tuple[str, str, str, str], _ClusterCaveats] = field(default_factory=dict)
    spot_rows: dict[tuple[str, str, str], SpotAdvisorRow | None] = field(default_factory=dict)

    def of(
        self,
        where: tuple[str, str, str, str, str],
        nodes: int,
        spot_fraction: float,
        wall_hours: float,
        p90_wall_hours: float,
    ) -> tuple[Caveat, ...]:
        """The caveats of one candidate: ``where`` is its (instance, accelerator, region, cloud,
        orchestrator); its node count, spot share and (P90) wall hours."""
        before, after = self.cluster(where)
        out = list(before)
        spot = self._spot(where, nodes, spot_fraction)
        if spot is not None:
            out.append(spot)
        out.extend(after)
        late = self._deadline(wall_hours, p90_wall_hours)
        if late is not None:
            out.append(late)
        return tuple(out)

    def many(
        self,
        where: tuple[str, str, str, str],
        orchestrators: Sequence[str],
        nodes: Sequence[int],
        spot_fractions: Sequence[float],
        walls: Sequence[float],
        p90_walls: Sequence[float],
    ) -> list[tuple[Caveat, ...]]:
        """``of`` for candidates of one (instance, accelerator, region, cloud) ``where``, one
        per element of the sequences. Those with neither more nodes on spot than the plan nor
        a wall-clock past the deadline share their cluster's caveats; only the others are
        noted one by one (``of`` decides: the test here only narrows whom it is asked about)."""
        spot_nodes = np.asarray(spot_fractions, dtype=np.float64) * np.asarray(nodes)
        alone = spot_nodes > self.user_spot_nodes
        if self.deadline is not None:
            alone |= np.asarray(walls) > self.deadline
            alone |= np.asarray(p90_walls) > self.deadline
        shared: dict[str, tuple[Caveat, ...]] = {}
        out: list[tuple[Caveat, ...]] = []
        for j, (orch, own) in enumerate(zip(orchestrators, alone.tolist(), strict=True)):
            if own:
                out.append(
                    self.of((*where, orch), nodes[j], spot_fractions[j], walls[j], p90_walls[j])
                )
                continue
            common = shared.get(orch)
            if common is None:
                before, after = self.cluster((*where, orch))
                common = shared[orch] = (*before, *after)
            out.append(common)
        return out

    def cluster(self, where: tuple[str, str, str, str, str]) -> _ClusterCaveats:
        """The caveats of a cluster (instance, accelerator, region, cloud, orchestrator),
        remembered in ``memo``."""
        instance, _, region, provider, orchestrator = where
        key = (instance, region, provider, orchestrator)
        known = self.memo.get(key)
        if known is None:
            known = self.memo[key] = _cluster_caveats(
                where, self.user_inst, self.catalog, self.as_of, self.user_orchestrator
            )
        return known

    def _spot(
        self, where: tuple[str, str, str, str, str], nodes: int, spot_fraction: float
    ) -> Caveat | None:
        """The ``spot_capacity`` caveat: more nodes on spot than the plan."""
        spot_nodes = spot_fraction * nodes
        if not spot_nodes > self.user_spot_nodes:
            return None
        instance, _, region, provider, _ = where
        key = (instance, provider, region)
        if key not in self.spot_rows:
            self.spot_rows[key] = self.catalog.spot_row(
                instance, provider=provider, region=region, as_of=self.as_of
            )
        row = self.spot_rows[key]
        seen = (
            f"Spot Advisor: {row.interruption_bucket} of these instances interrupted per month "
            f"in {region} (observed {row.observed})"
            if row is not None
            else f"no spot interruption data for {instance} in {region}"
        )
        text = (
            f"{spot_nodes:g} of {nodes} nodes on spot (the plan: {self.user_spot_nodes:g}): "
            f"{provider} does not guarantee spot capacity, and {spot_nodes:g} × {instance} "
            f"at once may not be available; {seen}"
        )
        return Caveat(kind="spot_capacity", text=text)

    def _deadline(self, wall_hours: float, p90_wall_hours: float) -> Caveat | None:
        """The ``deadline_risk`` caveat: past the deadline, expected or at the P90."""
        deadline = self.deadline
        if deadline is not None and wall_hours > deadline:  # the plan as written, say
            text = (
                f"misses the {deadline:g} h deadline on its expected wall-clock "
                f"({wall_hours:,.1f} h)"
            )
            return Caveat(kind="deadline_risk", text=text)
        if deadline is not None and p90_wall_hours > deadline >= wall_hours:
            text = (
                f"meets the {deadline:g} h deadline on its expected {wall_hours:,.1f} h, not at "
                f"its P90 ({p90_wall_hours:,.1f} h): failures and reclaims can make it miss; "
                "search on the P90 (--p90) to bound it"
            )
            return Caveat(kind="deadline_risk", text=text)
        return None


def _orchestrator_caveat(
    provider: str, orchestrator: str, user_inst: Instance, mine: str | None
) -> Caveat | None:
    """The ``orchestrator`` caveat of a candidate on the plan's cloud under another service."""
    if mine is None or provider != user_inst.provider or orchestrator == mine:
        return None
    what = _ORCHESTRATOR_SWITCH.get(orchestrator)
    if what is None:
        return None
    return Caveat(kind="orchestrator", text=f"moves the run from {mine} to {orchestrator}: {what}")


def _cluster_caveats(
    where: tuple[str, str, str, str, str],
    user_inst: Instance,
    catalog: Catalog,
    as_of: date,
    user_orchestrator: str | None,
) -> _ClusterCaveats:
    """The caveats that depend only on a candidate's (instance, accelerator, region, cloud,
    orchestrator): (those listed before the spot-capacity one, those after it)."""
    instance, accelerator, region, provider, orchestrator = where
    inst = catalog.instance(instance)
    acc: Accelerator = catalog.accelerator(accelerator)
    mine: Accelerator = catalog.accelerator(user_inst.accelerator)
    out: list[Caveat] = []
    why = _stand_in_reason(inst, catalog, region, as_of)
    if why is not None:
        out.append(Caveat(kind="stand_in", text=f"{instance}: {why}"))
    if acc.vendor != mine.vendor:
        hint = _PORTING.get(acc.vendor, f"porting from {mine.vendor} to {acc.vendor}")
        out.append(Caveat(kind="porting", text=f"{acc.name} instead of {mine.name}: {hint}"))
    if provider != user_inst.provider:
        text = (
            f"moves the run from {user_inst.provider} to {provider}: another account, quotas "
            "and capacity requests there, and the training data and checkpoints copied across "
            "clouds"
        )
        out.append(Caveat(kind="cloud", text=text))
    switched = _orchestrator_caveat(provider, orchestrator, user_inst, user_orchestrator)
    if switched is not None:
        out.append(switched)
    if acc.launched is not None and mine.launched is not None and acc.launched < mine.launched:
        no_fp8 = (
            "" if acc.peak_fp8_tflops is not None or mine.peak_fp8_tflops is None else ", no FP8"
        )
        text = (
            f"{acc.name} (launched {acc.launched}) is an older generation than {mine.name} "
            f"({mine.launched}): dense BF16 peak {acc.peak_bf16_tflops:g} vs "
            f"{mine.peak_bf16_tflops:g} TFLOP/s{no_fp8}"
        )
        out.append(Caveat(kind="older_gpu", text=text))
    if acc.hbm_gb < mine.hbm_gb:
        text = (
            f"{acc.hbm_gb:g} GB of memory per accelerator vs {mine.hbm_gb:g} GB: the parallel "
            "layout (tensor/pipeline split, micro-batch, activation recompute) must be re-tuned "
            "to fit"
        )
        out.append(Caveat(kind="memory", text=text))
    after: list[Caveat] = []
    rate = catalog.find_price(instance, "on_demand", provider=provider, region=region, as_of=as_of)
    if rate is not None and rate.region != region:
        text = (
            f"no {instance} price point for {region} in the catalog: priced at "
            f"{rate.region}'s ({provider}'s reference region); prices differ by region"
        )
        after.append(Caveat(kind="reference_region", text=text))
    return out, after
