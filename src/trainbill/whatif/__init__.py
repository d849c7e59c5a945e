"""The seed article's what-ifs, answered with the forecast's own numbers.

* ``compare_orchestrators``: the same job on raw EC2, SageMaker HyperPod and EKS (+ Karpenter):
  each is a full forecast with only the orchestrator swapped, so the premium, the control plane
  and the restart time (which scales every failure's and reclaim's lost hours) all move together.
* ``storage_check``: can per-node gp3 volumes feed the data loader and absorb checkpoints, and if
  not, which FSx for Lustre file system would, at what price, and what the stall costs otherwise.
* ``sparse_attention``: how much of the FLOPs attention is at each sequence length, what removing a
  share of it saves, and whether the article's "38% faster above 8K tokens" is possible at all.
* ``rule_of_thumb``: the article's ``instances × rate × hours × 1.3–1.5 × 1.1`` next to the
  itemized bill, with the gap explained category by category.

Pure functions of a plan and a catalog; every figure comes from the catalog's ``[whatif]`` and
other assumptions, cited in the results.
"""

from __future__ import annotations

from trainbill.whatif.orchestrators import (
    ORCHESTRATORS,
    OrchestratorRow,
    cheapest_priced,
    compare_orchestrators,
    with_orchestrator,
)
from trainbill.whatif.rule import RuleOfThumb, rule_of_thumb
from trainbill.whatif.sparse import (
    SparseRow,
    SparsityReport,
    apply_attention_sparsity,
    attention_share,
    attention_time_share,
    sparse_attention,
)
from trainbill.whatif.storage import StorageReport, storage_check

__all__ = [
    "ORCHESTRATORS",
    "OrchestratorRow",
    "RuleOfThumb",
    "SparseRow",
    "SparsityReport",
    "StorageReport",
    "apply_attention_sparsity",
    "attention_share",
    "attention_time_share",
    "cheapest_priced",
    "compare_orchestrators",
    "rule_of_thumb",
    "sparse_attention",
    "storage_check",
    "with_orchestrator",
]
