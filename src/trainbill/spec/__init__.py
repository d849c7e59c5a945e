"""Plan: what the user intends to run, validated at the edge.

A plan comes from a TOML file, from CLI flags, or from a JSON body (web API); all three go
through ``plan_from_dict`` so they share one schema and one set of error messages. Fields left
out stay ``None`` here and are filled from the catalog's ``assumptions.toml`` when usage is
worked out, so every default is data with a source (and the output says which were assumed).

Sections: ``run, model, cluster, purchase, prices, storage, data, checkpoint, evaluation,
network, monitoring, reliability``. Unknown keys are errors (a typo must not silently become a
default).
"""

from trainbill.spec.caps import MAX_AXIS_VALUES as MAX_AXIS_VALUES
from trainbill.spec.caps import (
    MAX_COST_USD,
    MAX_GPUS,
    MAX_HOURS,
    MAX_NODES,
    MAX_PARAMS,
    MAX_TOKENS,
    MAX_USD_PER_GPU_HOUR,
    MIN_USD_PER_GPU_HOUR,
    ORCHESTRATORS,
    PLAN_CAPS,
    SELF_MANAGED,
    Cap,
    orchestrator_on,
)
from trainbill.spec.caps import MAX_NODE_AXIS_VALUES as MAX_NODE_AXIS_VALUES
from trainbill.spec.caps import Architecture as Architecture
from trainbill.spec.caps import CheckpointTarget as CheckpointTarget
from trainbill.spec.caps import Commitment as Commitment
from trainbill.spec.caps import DataLocation as DataLocation
from trainbill.spec.caps import DataSource as DataSource
from trainbill.spec.caps import FsxTier as FsxTier
from trainbill.spec.caps import Orchestrator as Orchestrator
from trainbill.spec.caps import Precision as Precision
from trainbill.spec.caps import Provider as Provider
from trainbill.spec.caps import SavingsPlan as SavingsPlan
from trainbill.spec.caps import SavingsPlanKind as SavingsPlanKind
from trainbill.spec.fields import FieldSpec
from trainbill.spec.flags import RunFlags, plan_from_flags
from trainbill.spec.messages import _fields as _fields
from trainbill.spec.schema import plan_json_schema
from trainbill.spec.sections import (
    CheckpointSection,
    ClusterSection,
    DataSection,
    EvaluationSection,
    ExtraGroup,
    ModelSection,
    MonitoringSection,
    NetworkSection,
    Plan,
    PricesSection,
    PurchaseSection,
    ReliabilitySection,
    RunSection,
    StorageSection,
    WhatIf,
)
from trainbill.spec.text import (
    load_plan,
    merge_plan_dicts,
    plan_from_dict,
    plan_from_toml,
    plan_to_toml,
    read_plan_toml,
)

__all__ = [
    "MAX_COST_USD",
    "MAX_GPUS",
    "MAX_HOURS",
    "MAX_NODES",
    "MAX_PARAMS",
    "MAX_TOKENS",
    "MAX_USD_PER_GPU_HOUR",
    "MIN_USD_PER_GPU_HOUR",
    "ORCHESTRATORS",
    "PLAN_CAPS",
    "SELF_MANAGED",
    "Cap",
    "CheckpointSection",
    "ClusterSection",
    "DataSection",
    "EvaluationSection",
    "ExtraGroup",
    "FieldSpec",
    "ModelSection",
    "MonitoringSection",
    "NetworkSection",
    "Plan",
    "PricesSection",
    "PurchaseSection",
    "ReliabilitySection",
    "RunFlags",
    "RunSection",
    "StorageSection",
    "WhatIf",
    "load_plan",
    "merge_plan_dicts",
    "orchestrator_on",
    "plan_from_dict",
    "plan_from_flags",
    "plan_from_toml",
    "plan_json_schema",
    "plan_to_toml",
    "read_plan_toml",
]
