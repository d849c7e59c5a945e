"""Plan: what the user intends to run, validated at the edge.

A plan comes from a TOML file, from CLI flags, or from a JSON body (web API); all three go
through ``plan_from_dict`` so they share one schema and one set of error messages. Fields left
out stay ``None`` here and are filled from the catalog's ``assumptions.toml`` when usage is
worked out, so every default is data with a source (and the output says which were assumed).

Sections: ``run, model, cluster, purchase, prices, storage, data, checkpoint, evaluation,
network, monitoring, reliability``. Unknown keys are errors (a typo must not silently become a
default).
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Self, TypeVar, get_args

from trainbill._record import record
from trainbill.errors import (
    FrozenPlanError,
    SpecError,
    is_unicode_text,
    not_unicode_message,
    suggest,
    too_deep_message,
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
    "RunSection",
    "StorageSection",
    "WhatIf",
    "load_plan",
    "merge_plan_dicts",
    "orchestrator_on",
    "plan_from_dict",
    "plan_from_toml",
    "plan_json_schema",
    "plan_to_toml",
    "read_plan_toml",
]

Provider = Literal["aws", "gcp", "azure"]
Orchestrator = Literal["ec2", "vm", "hyperpod", "eks"]
#: Orchestrators each provider offers, self-managed VMs first. HyperPod and EKS are AWS
#: services, so a GCP or Azure plan naming them is an error, not an AWS fee on a GCP bill.
#: Self-managed VMs are called "ec2" on AWS and "vm" elsewhere; either name is accepted on any
#: provider and stored as that provider's name, so old plans and exports keep working.
ORCHESTRATORS: dict[str, tuple[str, ...]] = {
    "aws": ("ec2", "hyperpod", "eks"),
    "gcp": ("vm",),
    "azure": ("vm",),
}
#: The two names of self-managed VMs (no managed training service).
SELF_MANAGED = ("ec2", "vm")


def orchestrator_on(provider: str, name: str) -> str:
    """``name`` as ``provider`` calls it: self-managed VMs are "ec2" on AWS and "vm" elsewhere;
    other names are returned as given (whether the provider offers them is the caller's check)."""
    offered = ORCHESTRATORS.get(provider)
    return offered[0] if offered is not None and name in SELF_MANAGED else name


#: Training precision of the matmuls (``catalog.PRECISIONS``): each accelerator's dense peak at
#: it comes from the catalog (``Accelerator.precision_peak``).
Precision = Literal["fp32", "tf32", "fp16", "bf16", "fp8"]
#: The network's token-mixing layers: all attention (dense or MoE transformer), all selective
#: state-space scans (Mamba, Gu & Dao 2023), or a mix (Jamba, Zamba, Samba): the time model
#: counts each one's FLOPs and memory (``trainbill.architectures``).
Architecture = Literal["transformer", "state-space", "hybrid"]
SavingsPlan = Literal["none", "1yr", "3yr"]
#: AWS Savings Plan kinds (AWS Savings Plans user guide, "Savings Plans types"): Compute covers
#: EC2 of any family in any region (Trainium included); EC2 Instance covers one instance family
#: in one region at a deeper discount; SageMaker covers only SageMaker ``ml.*`` usage (HyperPod).
SavingsPlanKind = Literal["compute", "ec2-instance", "sagemaker"]
#: Whose commitment covers the run: one the organisation already holds (its cost is sunk or
#: shared, the run is charged the commitment rate) or one bought for this run (charged its
#: whole term, the unused part as its own line).
Commitment = Literal["existing", "buy"]
DataLocation = Literal["same_az", "cross_az", "cross_region"]
#: Where the training data lives. ``s3``/``fsx``/``ebs`` name the AWS services and, on GCP and
#: Azure, that cloud's counterpart (Cloud Storage / Blob; managed Lustre or Filestore; persistent
#: or managed disks), as ``checkpoint.target`` does. ``other_cloud``: object storage in another
#: provider (``data.provider``), read over the internet; ``on_premises``: your own data centre.
DataSource = Literal["s3", "fsx", "ebs", "other_cloud", "on_premises"]
CheckpointTarget = Literal["s3", "fsx", "ebs"]
FsxTier = Literal[
    "scratch_2", "persistent_125", "persistent_250", "persistent_500", "persistent_1000"
]


# Sanity bounds on plan numbers, far beyond any real run, so that a typo (``1e308``, an extra
# zero run amok) is an error naming the field instead of an overflow or a $1e300 bill. For
# scale: Llama 3 405B trained 3.8e25 FLOPs on 15.6e12 tokens with 16,384 GPUs in ~54 days.
MAX_HOURS = 1e6  # about 114 years of training
MAX_PARAMS = 1e15  # 2,500 x Llama 3 405B
MAX_TOKENS = 1e17  # 6,400 x Llama 3's 15.6T tokens
MAX_NODES = 100_000
#: Values one planner search axis may list (node counts, instances): the web API's cap and the
#: CLI's, so ``--nodes 1,...,3000`` is refused at once instead of searched for a minute.
MAX_AXIS_VALUES = 64
MAX_GPUS = 1_000_000
MAX_COST_USD = 1e12  # a trillion dollars: 1,000 x the largest training budgets reported
MIN_USD_PER_GPU_HOUR = 1e-3  # a tenth of a cent: below any cloud's price by orders of magnitude
MAX_USD_PER_GPU_HOUR = 1e4  # 100 x the dearest on-demand GPU-hour in the catalog
_EXABYTE_GB = 1e9
_SANITY_BOUND = 100_000  # upper bounds from here up are sanity caps, not rules of the field


@dataclass(frozen=True, slots=True)
class Cap:
    """The largest value a plan field accepts, and why no real run comes near it."""

    high: float
    why: str


#: THE table of upper bounds on every numeric plan field (``section.field``; extra groups as
#: ``cluster.extra_groups.count``). The schema below takes each ``le=`` from here, so files,
#: CLI flags and web request bodies (all through ``plan_from_dict``) share one set of caps and
#: one error text naming the field and its allowed range. Shares (0-1) are bounded by meaning;
#: the rest sit orders of magnitude above the largest runs reported, so only typos hit them.
#: The ``why`` is printed with the error. Figures the reasons lean on: Llama 3 405B (Dubey et
#: al. 2024, "The Llama 3 Herd of Models": 126 layers, model dimension 16,384, 16,384 H100s,
#: 419 unexpected interruptions in 54 days, i.e. ~5e-4 per GPU-day); Llama 4 Scout's 10M-token
#: context (Meta, "The Llama 4 herd", 2025-04-05); the largest EBS volume, io2 Block Express,
#: 64 TiB, 256,000 IOPS, 4,000 MiB/s (Amazon EBS User Guide, "Amazon EBS volume types"); the
#: largest Azure block blob, ~190.7 TiB (Azure Storage "Scalability and performance targets");
#: p5.48xlarge's 3,200 Gbps of EFA networking (AWS, "Amazon EC2 P5 Instances").
PLAN_CAPS: Mapping[str, Cap] = MappingProxyType(
    {
        "run.hours": Cap(MAX_HOURS, "about 114 years of training"),
        "run.deadline_hours": Cap(MAX_HOURS, "about 114 years"),
        "model.params": Cap(MAX_PARAMS, "2,500 x Llama 3 405B"),
        "model.active_params": Cap(MAX_PARAMS, "2,500 x Llama 3 405B"),
        "model.tokens": Cap(MAX_TOKENS, "6,400 x Llama 3's 15.6T training tokens"),
        "model.seq_len": Cap(100_000_000, "10 x the longest context window announced, 10M tokens"),
        "model.global_batch_tokens": Cap(
            MAX_TOKENS, "a batch cannot hold more than the largest token budget"
        ),
        "model.layers": Cap(100_000, "about 800 x Llama 3 405B's 126 layers"),
        "model.d_model": Cap(10_000_000, "about 600 x Llama 3 405B's 16,384"),
        "model.attention_share": Cap(1.0, "a share of the layers"),
        "cluster.nodes": Cap(MAX_NODES, "about 50 x Llama 3 405B's 2,048 eight-GPU nodes"),
        "cluster.gpus": Cap(MAX_GPUS, "about 60 x Llama 3 405B's 16,384 GPUs"),
        "cluster.extra_groups.count": Cap(MAX_NODES, "the cap on cluster.nodes"),
        "purchase.spot_fraction": Cap(1.0, "a share of the nodes"),
        "purchase.savings_plan_coverage": Cap(1.0, "a share of the compute"),
        "storage.ebs_gb_per_node": Cap(
            1e6, "a petabyte per node, about 14 x the largest EBS volume (64 TiB)"
        ),
        "storage.ebs_iops": Cap(1e7, "about 40 x the largest EBS volume's 256,000 IOPS"),
        "storage.ebs_throughput_mibps": Cap(
            1e6, "about 1 TiB/s per node, 250 x the fastest EBS volume"
        ),
        "storage.fsx_capacity_gb": Cap(_EXABYTE_GB, "an exabyte"),
        "data.dataset_gb": Cap(_EXABYTE_GB, "an exabyte"),
        "data.epochs": Cap(1e6, "a million passes; LLMs make 1-4, vision models a few hundred"),
        "data.object_mb": Cap(
            _EXABYTE_GB,
            "a petabyte per object, about 5 x the largest blob any of the three clouds stores",
        ),
        "checkpoint.interval_hours": Cap(MAX_HOURS, "about 114 years"),
        "checkpoint.bytes_per_param": Cap(
            1_000, "over 60 x the 16 bytes of mixed-precision Adam state"
        ),
        "checkpoint.size_gb": Cap(_EXABYTE_GB, "an exabyte"),
        "checkpoint.keep_last": Cap(1_000_000, "a million checkpoints"),
        "checkpoint.retention_days": Cap(36_525, "a century"),
        "checkpoint.write_gbytes_per_s_per_node": Cap(
            10_000, "25 x a p5 node's whole 3,200 Gbps (400 GB/s) network"
        ),
        "evaluation.interval_steps": Cap(
            1e9, "a billion steps, about 32 years at one step a second"
        ),
        "evaluation.steps": Cap(1e9, "a billion steps, about 32 years at one step a second"),
        "network.nat_gateways": Cap(
            MAX_NODES, "one per node of the largest cluster; one gateway serves a whole zone"
        ),
        "network.nat_gb_per_node_hour": Cap(
            1e7, "about 7 x a p5 node's whole 3,200 Gbps network for an hour"
        ),
        "network.public_ips_per_node": Cap(
            1_000, "far beyond any instance's network-interface limit"
        ),
        "monitoring.custom_metrics_per_node": Cap(1e7, "ten million metric series from every node"),
        "monitoring.logs_gb_per_node_hour": Cap(10_000, "2.8 GB/s of logs from every node"),
        "reliability.gpu_failure_rate_per_gpu_day": Cap(
            24.0, "every GPU failing every hour; measured rates are near 5e-4"
        ),
        "reliability.spot_reclaim_rate_per_node_hour": Cap(
            1.0, "every spot node reclaimed every hour"
        ),
        "reliability.restart_hours": Cap(8_766, "a year to recover from one failure"),
        "reliability.straggler_cv": Cap(1.0, "a spread as large as the step time itself"),
    }
)


def _cap(path: str) -> float:
    """The ``le=`` bound of a plan field, from ``PLAN_CAPS`` (a missing entry fails at import)."""
    return PLAN_CAPS[path].high


# --- the schema: one table of fields per section, read by one validator ---------------------
#
# Why not pydantic: a one-shot ``trainbill forecast`` spent ~0.13 s of CPU importing pydantic and
# building its validators, over a third of the whole process (issue #21: at most half of
# llm-analysis's time). The plan is a dozen flat sections of numbers, words and dates: each
# field is declared once below (kind, default, bounds from ``PLAN_CAPS``), and ``_read`` applies
# one rule per kind, with the messages pydantic gave (``_format_error`` turns them into the
# one line the user sees, naming the field and its allowed range).


@record
class FieldSpec:
    """One plan field's rule: what it holds, its default and its bounds.

    ``kind`` is one of ``float``, ``int``, ``str``, ``bool``, ``date``, ``choice`` (one of
    ``choices``), ``orchestrator`` (a choice whose default and aliases depend on the provider),
    ``section`` (a nested section, ``section``) or ``groups`` (a list of ``section``).
    """

    name: str
    kind: str
    default: Any = None
    #: Whether ``None`` (a key left out of a JSON body as null) is accepted: it means "take the
    #: catalog's assumption" for the fields whose default is ``None``.
    optional: bool = True
    #: No default: the key must be given (an extra group's instance).
    required: bool = False
    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    choices: tuple[str, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    section: type[Any] | None = None


@record
class _Declared:
    """A field as a section's class body declares it: kind, default and the rest of its rule.
    ``_Section.__init_subclass__`` turns each into the section's ``FieldSpec``."""

    kind: str
    default: Any
    rule: Mapping[str, Any]


def _spec(kind: str, default: Any = None, **rule: Any) -> Any:
    """Declare a field (typed ``Any`` so that ``hours: float | None = _spec(...)`` checks)."""
    return _Declared(kind=kind, default=default, rule=rule)


def _number(kind: str, path: str, *, gt: float | None = None, ge: float | None = None) -> Any:
    """An optional number with its lower bound and its cap from ``PLAN_CAPS`` (``path``)."""
    return _spec(kind, None, gt=gt, ge=ge, le=_cap(path))


def _choice(values: Any, default: str | None = None) -> Any:
    """One of a ``Literal``'s values; ``None`` (unset) is accepted only where the default is."""
    return _spec("choice", default, choices=get_args(values), optional=default is None)


def _sub(section: type[_Section]) -> Any:
    """A nested section, defaulting to the section with every field at its default (validated:
    the cluster's default orchestrator is the provider's self-managed VMs, not None)."""
    return _spec("section", section.model_validate({}), section=section, optional=False)


class _Section:
    """What every section (and the plan) shares: its field table, construction, comparison,
    copies and dumps.

    The class body declares each field once (``_spec`` and friends); ``__init_subclass__``
    collects them into ``model_fields``, and one generic ``__init__``/``__eq__``/``__hash__``
    serves every section. Why not dataclasses: generating those methods per class costs about
    a millisecond of start-up each, and a one-shot CLI run is mostly start-up (issue #21).
    Instances are immutable; the method names (``model_fields``, ``model_copy``,
    ``model_dump``, ``model_validate``) are those the rest of the package has always used, and
    behave as they did: a copy is not revalidated, a dump gives plain values (``mode="json"``:
    dates as text, groups as lists).
    """

    model_fields: ClassVar[Mapping[str, FieldSpec]] = MappingProxyType({})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A subclass keeps its parents' fields, then adds (or redeclares) its own.
        specs: dict[str, FieldSpec] = dict(cls.model_fields)
        for name, value in list(vars(cls).items()):
            if isinstance(value, _Declared):
                specs[name] = FieldSpec(name=name, kind=value.kind, default=value.default,
                                        **value.rule)  # fmt: skip
                delattr(cls, name)
        cls.model_fields = MappingProxyType(specs)

    def __init__(self, **values: Any) -> None:
        """Build a section from field values, validated like a plan file's (a wrong value is a
        ``SpecError`` naming the field; defaults are filled, the orchestrator by provider)."""
        errors: list[dict[str, Any]] = []
        made = _validate(type(self), values, (), errors)
        if errors or made is None:
            raise _spec_error(errors, type(self).__name__)
        self.__dict__.update(made.__dict__)

    @classmethod
    def _made(cls, values: Mapping[str, Any]) -> Self:
        """An instance of already-validated field values (the validator's own constructor)."""
        new = object.__new__(cls)
        new.__dict__.update(values)
        return new

    def _values(self) -> tuple[Any, ...]:
        return tuple(self.__dict__.get(name) for name in self.model_fields)

    def _carried(self) -> Any:
        """What an instance carries beside its fields (a plan's what-if), for equality."""
        return None

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Section)
        return self._values() == other._values() and self._carried() == other._carried()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.model_fields)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        msg = (
            f"{type(self).__name__}.{name} is frozen: derive a variant with model_copy(update=...)"
        )
        raise FrozenPlanError(msg)

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    def _check(self) -> str | None:
        """A rule across fields, checked once each field is valid: the message, or None."""
        return None

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update``'s fields replaced (not revalidated, as before); whatever else
        the instance carries (a plan's what-if) comes along."""
        changes = dict(update or {})
        unknown = set(changes) - set(self.model_fields)
        if unknown:
            msg = f"{type(self).__name__} has no field {', '.join(sorted(unknown))}"
            raise TypeError(msg)
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def model_dump(
        self, *, mode: str = "python", exclude_none: bool = False, exclude_defaults: bool = False
    ) -> dict[str, Any]:
        """The fields as a mapping; ``exclude_defaults`` leaves out what equals the field's
        default (a section equal to its default entirely), ``exclude_none`` the unset ones."""
        out: dict[str, Any] = {}
        for name, spec in self.model_fields.items():
            value = getattr(self, name)
            if (exclude_none and value is None) or (
                exclude_defaults and not spec.required and value == spec.default
            ):
                continue
            out[name] = _dumped(value, mode, exclude_none, exclude_defaults)
        return out

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """Validate ``data`` as this section; ``SpecError`` naming the first problem."""
        errors: list[dict[str, Any]] = []
        result = _validate(cls, data, (), errors)
        if errors or result is None:
            raise _spec_error(errors, "plan")
        return result


def _dumped(value: Any, mode: str, exclude_none: bool, exclude_defaults: bool) -> Any:
    if isinstance(value, _Section):
        return value.model_dump(
            mode=mode, exclude_none=exclude_none, exclude_defaults=exclude_defaults
        )
    if isinstance(value, tuple):
        items = [_dumped(v, mode, exclude_none, exclude_defaults) for v in value]
        return items if mode == "json" else tuple(items)
    if mode == "json" and isinstance(value, date):
        return value.isoformat()
    return value


_S1 = TypeVar("_S1", bound=_Section)


# --- reading one value -----------------------------------------------------------------------

_Loc = tuple[int | str, ...]
#: Numbers written as text (a JSON body's "10", TOML's "1e3"), read as Python reads them
#: (digit groups may be separated by "_"), but ASCII digits only: full-width "１２" is no number.
_DIGITS = r"[0-9](?:_?[0-9])*"
_FLOAT_TEXT = re.compile(
    rf"[+-]?(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?"
    r"|[+-]?(?:inf|infinity|nan)",
    re.IGNORECASE,
)
_INT_TEXT = re.compile(rf"[+-]?{_DIGITS}")
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: A date-time (accepted on a date field only at midnight): ISO 8601 extended form only, so
#: "20260115" or "2026-W03-1", which Python would read, are not taken as days.
_DATETIME_TEXT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2})?"
)


def _error(
    errors: list[dict[str, Any]], loc: _Loc, kind: str, msg: str, value: Any, **ctx: Any
) -> None:
    errors.append({"loc": loc, "type": kind, "msg": msg, "input": value, "ctx": ctx})


def _bound_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _quoted_choices(choices: tuple[str, ...]) -> str:
    """``'aws', 'gcp' or 'azure'``: the allowed values as a sentence."""
    quoted = [repr(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _refused_as_typed(spec: FieldSpec, value: Any) -> str | None:
    """What lax reading used to accept and must not: a boolean as a number (``nodes = true``
    priced one node), a word or number as a switch, a number as a date (``date = 0`` became
    1970-01-01) and text that is not Unicode (half a UTF-16 pair, which crashed printing)."""
    if _is_boolean(value):
        if spec.kind != "bool":
            return f"expected a number or text, not the boolean {str(bool(value)).lower()}"
    elif spec.kind == "bool" and value is not None:
        return f"expected true or false, not {value!r}"
    if spec.kind == "date" and _is_number(value):
        return f"expected a date like 2026-01-15, not the number {value!r}"
    if isinstance(value, str) and not is_unicode_text(value):
        return not_unicode_message(value)
    return None


def _is_boolean(value: Any) -> bool:
    """``True``/``False``, or NumPy's boolean scalar (``numpy.bool_``, ``numpy.bool`` in 2.x)."""
    kind = type(value)
    return isinstance(value, bool) or (
        kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool")
    )


def _is_number(value: Any) -> bool:
    """A real number of any numeric type (int, float, Decimal, Fraction, NumPy scalars); never
    a boolean or a complex number."""
    if _is_boolean(value):
        return False
    return isinstance(value, numbers.Number) and not isinstance(value, complex)


#: Counts a plan may write as papers and model cards do, and as the command line takes them
#: ("70B" parameters, "15T" tokens, "4M" tokens per batch): K, M, B, T.
_COUNT_FIELDS = frozenset({"params", "active_params", "tokens", "global_batch_tokens"})
_COUNT_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def _to_float(value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> float | None:
    number: Any = value
    if isinstance(value, str):
        text = value.strip()
        scale = _COUNT_SUFFIX.get(text[-1:].lower()) if loc and loc[-1] in _COUNT_FIELDS else None
        if scale is not None and _FLOAT_TEXT.fullmatch(text[:-1].strip()):
            return _to_float(float(text[:-1].strip()) * scale, loc, errors)
        if not _FLOAT_TEXT.fullmatch(text):
            msg = "Input should be a valid number, unable to parse string as a number"
            _error(errors, loc, "float_parsing", msg, value)
            return None
        number = float(text)
    if not _is_number(number):
        _error(errors, loc, "float_type", "Input should be a valid number", value)
        return None
    try:
        number = float(number)
    except (OverflowError, TypeError, ValueError):  # past the largest float; not a real number
        _error(errors, loc, "float_type", "Input should be a valid number", value)
        return None
    if not math.isfinite(number):
        _error(errors, loc, "finite_number", "Input should be a finite number", value)
        return None
    return float(number)


def _int_text(value: str, loc: _Loc, errors: list[dict[str, Any]]) -> int | None:
    """A whole number written as text: ``"10"``, ``"1_000"`` or ``"10.0"``; digits past what
    Python converts (4,300) are refused as too long, not a crash."""
    text = value.strip()
    try:
        if _INT_TEXT.fullmatch(text):
            return int(text)
        if _FLOAT_TEXT.fullmatch(text):
            number = float(text)
            if math.isfinite(number) and number.is_integer():
                return int(number)
    except ValueError:
        msg = "Unable to parse input string as an integer, exceeded maximum size"
        _error(errors, loc, "int_parsing_size", msg, value)
        return None
    msg = "Input should be a valid integer, unable to parse string as an integer"
    _error(errors, loc, "int_parsing", msg, value)
    return None


def _to_int(value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> int | None:
    if isinstance(value, str):
        return _int_text(value, loc, errors)
    if isinstance(value, numbers.Integral) and _is_number(value):
        return int(value)
    if not _is_number(value):
        _error(errors, loc, "int_type", "Input should be a valid integer", value)
        return None
    try:
        number = float(value)
    except (OverflowError, TypeError, ValueError):
        _error(errors, loc, "int_type", "Input should be a valid integer", value)
        return None
    if not math.isfinite(number):
        _error(errors, loc, "finite_number", "Input should be a finite number", value)
        return None
    if not number.is_integer():
        msg = "Input should be a valid integer, got a number with a fractional part"
        _error(errors, loc, "int_from_float", msg, value)
        return None
    return int(number)


def _in_bounds(
    spec: FieldSpec, number: float, raw: Any, loc: _Loc, errors: list[dict[str, Any]]
) -> bool:
    if spec.le is not None and not number <= spec.le:
        msg = f"Input should be less than or equal to {_bound_text(spec.le)}"
        _error(errors, loc, "less_than_equal", msg, raw, le=spec.le)
        return False
    if spec.ge is not None and not number >= spec.ge:
        msg = f"Input should be greater than or equal to {_bound_text(spec.ge)}"
        _error(errors, loc, "greater_than_equal", msg, raw, ge=spec.ge)
        return False
    if spec.gt is not None and not number > spec.gt:
        msg = f"Input should be greater than {_bound_text(spec.gt)}"
        _error(errors, loc, "greater_than", msg, raw, gt=spec.gt)
        return False
    return True


def _to_date(value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> date | None:
    parsed: Any = value
    if isinstance(value, str):
        text = value.strip()
        is_date, is_datetime = _DATE_TEXT.fullmatch(text), _DATETIME_TEXT.fullmatch(text)
        why = ""
        if is_date or is_datetime:
            try:
                parsed = date.fromisoformat(text) if is_date else dt.datetime.fromisoformat(text)
            except ValueError as exc:  # well formed, out of range: say which part
                why = f" ({exc})"
        if why or not (is_date or is_datetime):
            msg = f"Input should be a valid date in the format YYYY-MM-DD{why}"
            _error(errors, loc, "date_format", msg, value)
            return None
    if isinstance(parsed, dt.datetime):
        if parsed.time() != dt.time(0):
            msg = "Datetimes provided to dates should have zero time - e.g. be exact dates"
            _error(errors, loc, "date_from_datetime_inexact", msg, value)
            return None
        return parsed.date()
    if not isinstance(parsed, date):
        _error(errors, loc, "date_type", "Input should be a valid date", value)
        return None
    return parsed


def _to_text(spec: FieldSpec, value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> Any:
    if not isinstance(value, str):
        _error(errors, loc, "string_type", "Input should be a valid string", value)
        return None
    if spec.min_length is not None and len(value) < spec.min_length:
        unit = "character" if spec.min_length == 1 else "characters"
        msg = f"String should have at least {spec.min_length} {unit}"
        _error(errors, loc, "string_too_short", msg, value)
        return None
    if spec.max_length is not None and len(value) > spec.max_length:
        msg = f"String should have at most {spec.max_length} characters"
        _error(errors, loc, "string_too_long", msg, value)
        return None
    return value


def _to_choice(spec: FieldSpec, value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> Any:
    if isinstance(value, str) and value in spec.choices:
        return value
    expected = _quoted_choices(spec.choices)
    _error(errors, loc, "literal_error", f"Input should be {expected}", value, expected=expected)
    return None


def _orchestrator(
    spec: FieldSpec, value: Any, provider: str, loc: _Loc, errors: list[dict[str, Any]]
) -> Any:
    """Default and alias resolution by provider (validated before the orchestrator)."""
    offered = ORCHESTRATORS[provider]
    if value is None:
        return offered[0]
    if isinstance(value, str):
        value = orchestrator_on(provider, value)
        if value not in offered and value in ORCHESTRATORS["aws"]:
            msg = (
                f"{value!r} is an AWS service, not offered on {provider}; allowed values for "
                f"{provider}: {', '.join(offered)}"
            )
            _error(errors, loc, "value_error", msg, value)
            return None
    return _to_choice(spec, value, loc, errors)


def _read(
    spec: FieldSpec, value: Any, loc: _Loc, errors: list[dict[str, Any]], got: dict[str, Any]
) -> tuple[bool, Any]:
    """(valid, value) of one field; a problem is appended to ``errors``. ``got`` holds the
    section's fields read so far (the orchestrator needs the provider)."""
    before = len(errors)
    refused = _refused_as_typed(spec, value)
    if refused is not None:
        _error(errors, loc, "value_error", refused, value)
        return False, None
    if spec.kind == "orchestrator":
        out = _orchestrator(spec, value, str(got.get("provider", "aws")), loc, errors)
    elif value is None and spec.optional:
        return True, None
    elif spec.kind in ("float", "int"):
        out = (_to_float if spec.kind == "float" else _to_int)(value, loc, errors)
        if out is not None and not _in_bounds(spec, out, value, loc, errors):
            out = None
    elif spec.kind == "str":
        out = _to_text(spec, value, loc, errors)
    elif spec.kind == "bool":
        out = bool(value) if _is_boolean(value) else None
        if out is None:
            _error(errors, loc, "bool_type", "Input should be a valid boolean", value)
    elif spec.kind == "date":
        out = _to_date(value, loc, errors)
    elif spec.kind == "choice":
        out = _to_choice(spec, value, loc, errors)
    elif spec.kind == "section":
        assert spec.section is not None
        out = _validate(spec.section, value, loc, errors)
    else:  # groups
        assert spec.section is not None
        out = _groups(spec.section, value, loc, errors)
    return len(errors) == before, out


def _groups(
    section: type[_Section], value: Any, loc: _Loc, errors: list[dict[str, Any]]
) -> tuple[Any, ...] | None:
    if not isinstance(value, list | tuple):
        _error(errors, loc, "tuple_type", "Input should be a valid tuple", value)
        return None
    items = [_validate(section, item, (*loc, i), errors) for i, item in enumerate(value)]
    return tuple(items)


def _shown_key(key: Any) -> str:
    """A key as the error names it: as typed when it is printable Unicode text, else its
    escaped form (a key with a newline, a terminal escape or half a UTF-16 pair would break
    the one-line message or the JSON reply)."""
    if isinstance(key, str) and key.isprintable() and is_unicode_text(key):
        return key
    return ascii(key)


def _validate(cls: type[_S1], data: Any, loc: _Loc, errors: list[dict[str, Any]]) -> _S1 | None:
    """``data`` as a ``cls`` section: every field read in order, unknown keys refused, then
    the section's own cross-field rule; None (problems in ``errors``) when anything failed."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        msg = f"Input should be a valid dictionary or instance of {cls.__name__}"
        _error(errors, loc, "model_type", msg, data)
        return None
    before = len(errors)
    got: dict[str, Any] = {}
    for name, spec in cls.model_fields.items():
        if name in data:
            ok, value = _read(spec, data[name], (*loc, name), errors, got)
            if ok:
                got[name] = value
        elif spec.required:
            _error(errors, (*loc, name), "missing", "Field required", data)
        elif spec.kind == "orchestrator":
            provider = str(got.get("provider", "aws"))
            got[name] = _orchestrator(spec, None, provider, (*loc, name), errors)
        else:
            got[name] = spec.default
    for key in data:
        if key not in cls.model_fields:
            _error(errors, (*loc, _shown_key(key)), "extra_forbidden",
                   "Extra inputs are not permitted", data[key])  # fmt: skip
    if len(errors) > before:
        return None
    section = cls._made(got)
    problem = section._check()
    if problem is not None:
        _error(errors, loc, "value_error", problem, data)
        return None
    return section


class RunSection(_Section):
    """Name, hours of pure training (or derive them from [model]), an optional deadline, and the
    day the run happens.

    ``date`` is the run's software date: how mature the kernels and frameworks for its chip
    were (the time model's maturity factor). It is apart from ``[prices] as_of`` so a past run
    can be back-tested on its own software at another day's prices; left out, it is the price
    date, else today.
    """

    name: str = _spec("str", "training-run", optional=False)
    """The run's name, shown in every output's title and in the report."""
    hours: float | None = _number("float", "run.hours", gt=0)
    """Wall-clock hours of pure training (no stalls, evaluation or lost work). Left out, the
    time model derives them from `[model]` params and tokens on the cluster."""
    deadline_hours: float | None = _number("float", "run.deadline_hours", gt=0)
    """The wall-clock the run must finish within: the Monte Carlo gives the odds of missing it,
    the planner searches only plans that meet it, and the advice checks its changes against it."""
    date: dt.date | None = _spec("date")
    """The day the run happens: its software maturity (how mature kernels and frameworks for its
    chip were), apart from the price date so a past run can be back-tested on its own software
    at another day's prices. Default: `prices.as_of`, else today."""


class ModelSection(_Section):
    """The network being trained: size, tokens, precision, shape."""

    # Counts: at least one parameter and one token (``1e-300`` parameters is a typo).
    params: float | None = _number("float", "model.params", ge=1)
    """Total parameters (`70e9` or `"70B"`: suffixes K, M, B, T). Sets the FLOPs, the checkpoint
    size and the bytes synchronised per step."""
    active_params: float | None = _number("float", "model.active_params", ge=1)
    """Parameters active per token, for a mixture-of-experts model (at most `params`). Default:
    `params` (a dense model)."""
    tokens: float | None = _number("float", "model.tokens", ge=1)
    """Training tokens (`1.4e12` or `"1.4T"`); with `params`, the FLOPs the run must do."""
    precision: Precision = _choice(Precision, "bf16")
    """Matmul precision: `fp8` speeds up only the matmuls, by the fitted FP8 efficiency."""
    seq_len: int | None = _number("int", "model.seq_len", gt=0)
    """Sequence length in tokens: attention FLOPs, activation memory and the layout search."""
    global_batch_tokens: float | None = _number("float", "model.global_batch_tokens", ge=1)
    """Tokens per optimizer step. Default: 2,048 tokens per GPU held within 4M and 16M tokens
    (63M for MoE), rounded to whole sequences; a stated batch always wins."""
    layers: int | None = _number("int", "model.layers", gt=0)
    """Transformer layers. With `d_model`, the model's shape; without, estimated from params =
    12·layers·d_model² with d_model/layers = 128."""
    d_model: int | None = _number("int", "model.d_model", gt=0)
    """Hidden width of the model (see `layers`)."""
    architecture: Architecture = _choice(Architecture, "transformer")
    """`transformer`, `state-space` (Mamba-style scans) or `hybrid` (attention and state-space
    layers); sets the FLOPs per token and the memory-bound share of the step."""
    attention_share: float | None = _number("float", "model.attention_share", gt=0)
    """Share of a hybrid's layers that are attention (the rest state-space). Default: the
    catalog's `time.hybrid_attention_share`. Only for `hybrid`."""

    def _check(self) -> str | None:
        if (
            self.active_params is not None
            and self.params is not None
            and self.active_params > self.params
        ):
            return f"active_params ({self.active_params:g}) cannot exceed params ({self.params:g})"
        # A transformer is all attention: a share of 1 agrees with it; any other share names a
        # hybrid, and a state-space model has no attention layers at all.
        consistent = self.architecture == "hybrid" or (
            self.architecture == "transformer" and self.attention_share == 1.0
        )
        if self.attention_share is not None and not consistent:
            return (
                f"attention_share is the attention share of a hybrid's layers; architecture is "
                f'{self.architecture!r} (give architecture = "hybrid" or drop attention_share)'
            )
        return None


class ExtraGroup(_Section):
    """A further instance group billed next to the GPU workers (e.g. a CPU head node).

    Imported clusters (HyperPod, SkyPilot, Terraform) often have one; it is priced as its own
    compute line for the whole wall-clock (``trainbill.costs.extra_groups``).
    """

    name: str = _spec("str", "extra", optional=False)
    """The group's name, shown in its ledger line."""
    instance: str = _spec("str", "", optional=False, required=True, min_length=1)
    """Instance type of the group (required)."""
    count: int = _spec("int", 1, optional=False, gt=0, le=_cap("cluster.extra_groups.count"))
    """Instances in the group."""
    spot: bool = _spec("bool", False, optional=False)
    """Whether the group runs on spot."""


class ClusterSection(_Section):
    """Where and on what: provider, region, instance type and node count (or GPU + count)."""

    provider: Provider = _choice(Provider, "aws")
    """The cloud: prices, services and regions come from its own catalog rows, never another's."""
    region: str | None = _spec("str")
    """Region, as the provider names it (`us-east-1`, `us-central1`, `eastus`). Default: the
    provider's reference region; a region the catalog does not price is priced at the reference
    region, with a warning."""
    instance: str | None = _spec("str")
    """Instance type (`p5.48xlarge`); or give `gpu` and trainbill picks the provider's largest
    instance holding it."""
    nodes: int | None = _number("int", "cluster.nodes", gt=0)
    """Instance count; or give `gpus` (rounded up to whole nodes, with a warning)."""
    gpu: str | None = _spec("str")
    """Accelerator by catalog id or a name it is sold under (`h100`, `A100`, `NVIDIA
    A100-SXM4-80GB`, `trn2`), when no `instance` is given."""
    gpus: int | None = _number("int", "cluster.gpus", gt=0)
    """Accelerator count, when no `nodes` is given."""
    orchestrator: Orchestrator = _spec("orchestrator", None, choices=get_args(Orchestrator))
    """Who runs the cluster: self-managed VMs (`ec2` on AWS, `vm` elsewhere), SageMaker HyperPod
    or EKS (AWS only). Sets the restart time after a failure and the orchestration line."""
    zone: str | None = _spec("str", min_length=1, max_length=64)
    """Availability zone: an AWS AZ ID (`use1-az4`, the same place in every account) or AZ name
    (`us-east-1a`), a GCP zone (`us-central1-a`) or an Azure zone number (`"1"`). Checked
    against the region's zones; with an AWS AZ ID, spot is that zone's price."""
    extra_groups: tuple[ExtraGroup, ...] = _spec("groups", (), optional=False, section=ExtraGroup)
    """Further instance groups billed beside the GPU workers (a CPU head node, a login node),
    each priced as its own compute line for the whole wall-clock."""


class PurchaseSection(_Section):
    """How the instance-hours are bought."""

    spot_fraction: float = _spec(
        "float", 0.0, optional=False, ge=0, le=_cap("purchase.spot_fraction")
    )
    """Share of the nodes on spot (0–1), priced at the catalog's spot price and exposed to
    reclaims."""
    savings_plan: SavingsPlan = _choice(SavingsPlan, "none")
    """Savings Plan (or committed-use discount, reservation) term covering the on-demand hours;
    priced only at a published rate."""
    savings_plan_coverage: float | None = _number("float", "purchase.savings_plan_coverage", ge=0)
    """Share of the on-demand instance-hours the commitment covers (0–1). Default: 1 when a plan
    is named."""
    savings_plan_kind: SavingsPlanKind | None = _choice(SavingsPlanKind)
    """AWS Savings Plan kind: `compute` (any EC2 family and region), `ec2-instance` (one family
    in one region, deeper discount) or `sagemaker` (SageMaker `ml.*` usage). Default:
    `sagemaker` under HyperPod, else `compute`."""
    savings_plan_family: str | None = _spec("str")
    """The instance family an EC2 Instance Savings Plan was bought for (`p5`). Default: the
    plan's own."""
    commitment: Commitment | None = _choice(Commitment)
    """Whose commitment: `buy` (bought for this run: its whole term is charged, used or not) or
    `existing` (one the organisation holds covers the run at its rate). Default: `buy`, since a
    forecast never assumes someone else paid."""


class PricesSection(_Section):
    """Which dated price points to use (default: the newest on or before today)."""

    as_of: date | None = _spec("date")
    """Price date: the catalog's price points in force that day. Default: today (then the output
    depends on the day it runs)."""


class StorageSection(_Section):
    """Per-node EBS and an optional shared FSx for Lustre file system."""

    ebs_gb_per_node: float | None = _number("float", "storage.ebs_gb_per_node", ge=0)
    """Block volume (EBS gp3 on AWS) per node, in GB."""
    ebs_iops: float | None = _number("float", "storage.ebs_iops", ge=0)
    """Provisioned IOPS per volume; above the gp3 baseline they are billed."""
    ebs_throughput_mibps: float | None = _number("float", "storage.ebs_throughput_mibps", ge=0)
    """Provisioned throughput per volume in MiB/s; above the gp3 baseline it is billed."""
    fsx_capacity_gb: float | None = _number("float", "storage.fsx_capacity_gb", ge=0)
    """Shared Lustre file system capacity (FSx for Lustre on AWS) in GiB as typed in the
    console; priced at the size the cloud creates. 0: none."""
    fsx_tier: FsxTier | None = _choice(FsxTier)
    """Lustre deployment type and throughput tier (MB/s per TiB), which sets its price and the
    checkpoint write rate."""


class DataSection(_Section):
    """The training data: size, where it lives, how often it is read.

    ``source`` says which service holds it; for data in the cluster's own cloud, ``location``
    (or the explicit ``zone``/``region`` of the file system or bucket) says where it sits
    relative to the cluster; ``other_cloud`` data names its ``provider`` (and ``region``).
    """

    dataset_gb: float | None = _number("float", "data.dataset_gb", ge=0)
    """Training data size in GB. Default: tokens × 4 bytes."""
    source: DataSource | None = _choice(DataSource)
    """Which service holds the data: object storage (`s3`; Cloud Storage or Blob elsewhere),
    `fsx`, `ebs`, another provider's object storage (`other_cloud`) or your own data centre
    (`on_premises`). Sets what transfer is charged."""
    location: DataLocation | None = _choice(DataLocation)
    """Where data in the cluster's own cloud sits relative to it; object storage is regional, so
    `cross_az` costs nothing there (a warning says so)."""
    zone: str | None = _spec("str", min_length=1, max_length=64)
    """Zone of a file system or volume holding the data (`fsx` or `ebs` only); another zone than
    the cluster's makes it `cross_az`."""
    region: str | None = _spec("str", min_length=1, max_length=64)
    """Region of the bucket or file system holding the data, when not the cluster's:
    inter-region transfer at the pair's rate."""
    provider: Provider | None = _choice(Provider)
    """The cloud holding the data, for `source = "other_cloud"`: its internet egress tiers are
    charged on its bill."""
    epochs: float | None = _number("float", "data.epochs", gt=0)
    """Reads of the whole dataset over the run."""
    object_mb: float | None = _number("float", "data.object_mb", gt=0)
    """Size of one object (shard) read per GET request, in MB."""

    def _check(self) -> str | None:
        """Each placement field means something for some sources only: refuse the others
        rather than ignore them (a zone for S3, which is regional, is a misunderstanding)."""
        src = self.source
        if self.provider is not None and src != "other_cloud":
            return 'provider names the cloud holding the data; it needs source = "other_cloud"'
        if src == "other_cloud" and self.provider is None:
            return (
                'source = "other_cloud" needs provider = "aws", "gcp" or "azure" (the cloud '
                "holding the data)"
            )
        if src in ("other_cloud", "on_premises") and (
            self.location is not None or self.zone is not None
        ):
            return (
                "location and zone place data inside the cluster's cloud; not used with source "
                f"= {src!r}"
            )
        if src == "on_premises" and self.region is not None:
            return 'region is not used with source = "on_premises"'
        if self.zone is not None and src not in ("fsx", "ebs"):
            return (
                f"zone applies to fsx or ebs data (a file system or volume lives in one zone); "
                f"object storage (source = {src or 's3'!r}) is regional"
            )
        return None


class CheckpointSection(_Section):
    """Checkpoint cadence, size and destination."""

    interval_hours: float | None = _number("float", "checkpoint.interval_hours", gt=0)
    """Hours between checkpoints. Default: Young's optimum sqrt(2 × write stall × cluster MTBF),
    at most 2 h."""
    bytes_per_param: float | None = _number("float", "checkpoint.bytes_per_param", gt=0)
    """Checkpoint bytes per parameter (bf16 weights, fp32 master weights, Adam moments)."""
    size_gb: float | None = _number("float", "checkpoint.size_gb", gt=0)
    """Checkpoint size in GB, in place of params × bytes_per_param."""
    target: CheckpointTarget | None = _choice(CheckpointTarget)
    """Where checkpoints are written: object storage, the shared file system or the node's
    volume."""
    keep_last: int | None = _number("int", "checkpoint.keep_last", ge=1)
    """Checkpoints retained (rolling); storage is charged for them."""
    retention_days: float | None = _number("float", "checkpoint.retention_days", ge=0)
    """Days retained checkpoints are stored after the run."""
    write_gbytes_per_s_per_node: float | None = _number(
        "float", "checkpoint.write_gbytes_per_s_per_node", gt=0
    )
    """Checkpoint write rate per node in GB/s, capped by the file system's or the volume's
    throughput."""
    asynchronous: bool | None = _spec("bool")
    """Whether checkpoints are written in the background: training then stalls only for the
    snapshot."""


class EvaluationSection(_Section):
    """Validation passes during training: every ``interval_steps`` steps, ``steps`` forward-only
    steps at the training batch size (``interval_steps = 0``: no evaluation)."""

    interval_steps: int | None = _number("int", "evaluation.interval_steps", ge=0)
    """Training steps between evaluations; 0 means no evaluation."""
    steps: int | None = _number("int", "evaluation.steps", ge=1)
    """Forward-only steps per evaluation, at the training batch size."""


class NetworkSection(_Section):
    """NAT gateways and public IPv4 addresses."""

    nat_gateways: int | None = _number("int", "network.nat_gateways", ge=0)
    """NAT gateways in the cluster's network, billed per hour."""
    nat_gb_per_node_hour: float | None = _number("float", "network.nat_gb_per_node_hour", ge=0)
    """GB each node sends through NAT per hour (container pulls, packages, telemetry), besides
    the dataset and checkpoint bytes that cross it."""
    s3_via_nat: bool | None = _spec("bool")
    """Whether S3 traffic crosses the NAT gateway (no gateway VPC endpoint): then dataset reads
    and checkpoints to S3 are NAT-processed GB."""
    public_ips_per_node: float | None = _number("float", "network.public_ips_per_node", ge=0)
    """Public IPv4 addresses per node, billed per address-hour (AWS since 2024-02-01)."""


class MonitoringSection(_Section):
    """CloudWatch metrics and logs."""

    custom_metrics_per_node: float | None = _number(
        "float", "monitoring.custom_metrics_per_node", ge=0
    )
    """Custom metrics each node publishes (CloudWatch metric-months, in volume tiers)."""
    logs_gb_per_node_hour: float | None = _number("float", "monitoring.logs_gb_per_node_hour", ge=0)
    """GB of logs each node ingests per hour."""


class ReliabilitySection(_Section):
    """Failure and reclaim rates, restart time and straggler spread."""

    gpu_failure_rate_per_gpu_day: float | None = _number(
        "float", "reliability.gpu_failure_rate_per_gpu_day", ge=0
    )
    """Hardware failures per GPU-day that interrupt the job. Default: Llama 3 405B's rate."""
    spot_reclaim_rate_per_node_hour: float | None = _number(
        "float", "reliability.spot_reclaim_rate_per_node_hour", ge=0
    )
    """Spot reclaims per spot node-hour. Default: from the Spot Advisor interruption bucket of
    the instance and region."""
    restart_hours: float | None = _number("float", "reliability.restart_hours", ge=0)
    """Hours to resume after a failure or reclaim. Default by orchestrator: 1 h self-managed,
    0.5 h EKS, 0.25 h HyperPod auto-resume."""
    straggler_cv: float | None = _number("float", "reliability.straggler_cv", ge=0)
    """Coefficient of variation of per-GPU step time: the slowest GPU sets each step."""


@record
class WhatIf:
    """What a what-if (``trainbill.whatif``) did to a plan that its fields cannot say.

    The sparse-attention what-if cuts the training hours by the work it skips: ``time_saving``
    is the share of the modelled (or stated) pure-training hours removed, applied where the time
    model's answer is taken (``usage``), so the hours stay the model's and keep their error band,
    and every variant of the plan (more nodes, another instance) is re-modelled before the cut.
    (It once wrote the cut hours into ``run.hours``, which made them "stated": the band and the
    P90 budget's model error vanished.) ``flops_saving`` (the share of the model's FLOPs no longer
    performed) lets the forecast report MFU on the FLOPs actually performed, and ``notes`` become
    forecast warnings of kind ``whatif`` so every output says the what-if was applied. Not part
    of the plan file: a plan read from TOML has none.
    """

    time_saving: float = 0.0
    flops_saving: float = 0.0
    notes: tuple[str, ...] = ()


class Plan(_Section):
    """A whole training plan. Immutable; derive variants with ``model_copy(update=...)``.

    ``whatif`` travels with every ``model_copy`` (outside the schema and the plan file, but part
    of equality: a what-if plan is not the plan), so its variants (headline actions, sizing
    sweeps) keep it.
    """

    run: RunSection = _sub(RunSection)
    model: ModelSection = _sub(ModelSection)
    cluster: ClusterSection = _sub(ClusterSection)
    purchase: PurchaseSection = _sub(PurchaseSection)
    prices: PricesSection = _sub(PricesSection)
    storage: StorageSection = _sub(StorageSection)
    data: DataSection = _sub(DataSection)
    checkpoint: CheckpointSection = _sub(CheckpointSection)
    evaluation: EvaluationSection = _sub(EvaluationSection)
    network: NetworkSection = _sub(NetworkSection)
    monitoring: MonitoringSection = _sub(MonitoringSection)
    reliability: ReliabilitySection = _sub(ReliabilitySection)

    def _check(self) -> str | None:
        c = self.cluster
        if c.instance is None and c.gpu is None:
            return (
                'cluster needs an instance (e.g. instance = "p5.48xlarge") or a gpu (e.g. gpu = '
                '"h100")'
            )
        if c.nodes is None and c.gpus is None:
            return "cluster needs nodes (instance count) or gpus (accelerator count)"
        if self.run.hours is None and (self.model.params is None or self.model.tokens is None):
            return "give run.hours, or model.params and model.tokens so the hours can be derived"
        return None

    def _carried(self) -> Any:
        return self.whatif

    @property
    def whatif(self) -> WhatIf:
        """What a what-if applied to this plan (nothing for a plan as written)."""
        found = self.__dict__.get("_whatif")
        return found if isinstance(found, WhatIf) else _NO_WHATIF

    def with_whatif(self, whatif: WhatIf) -> Plan:
        """A copy of the plan carrying ``whatif`` (compared with the plan, not dumped)."""
        new = self.model_copy()
        new.__dict__["_whatif"] = whatif
        return new


_NO_WHATIF = WhatIf()
_SECTIONS: Mapping[str, type[_Section]] = {
    name: spec.section for name, spec in Plan.model_fields.items() if spec.section is not None
}


def _json_type(spec: FieldSpec) -> dict[str, Any]:
    """One field's JSON Schema, before its default and whether it may be null."""
    if spec.kind in ("float", "int"):
        out: dict[str, Any] = {"type": "number" if spec.kind == "float" else "integer"}
        if spec.ge is not None:
            out["minimum"] = spec.ge
        if spec.gt is not None:
            out["exclusiveMinimum"] = spec.gt
        if spec.le is not None:
            out["maximum"] = spec.le
        return out
    if spec.kind in ("choice", "orchestrator"):
        return {"type": "string", "enum": list(spec.choices)}
    if spec.kind == "date":
        return {"type": "string", "format": "date"}
    if spec.kind == "bool":
        return {"type": "boolean"}
    if spec.kind == "section":
        assert spec.section is not None
        return {"$ref": f"#/$defs/{spec.section.__name__}"}
    if spec.kind == "groups":
        assert spec.section is not None
        return {"type": "array", "items": {"$ref": f"#/$defs/{spec.section.__name__}"}}
    out = {"type": "string"}
    if spec.min_length is not None:
        out["minLength"] = spec.min_length
    if spec.max_length is not None:
        out["maxLength"] = spec.max_length
    return out


def _section_schema(section: type[_Section]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, spec in section.model_fields.items():
        kind = _json_type(spec)
        prop = {"anyOf": [kind, {"type": "null"}]} if spec.optional else dict(kind)
        if not spec.required and spec.kind != "section":
            default = _dumped(spec.default, "json", False, False)
            prop["default"] = default
        properties[name] = prop
    out: dict[str, Any] = {
        "type": "object",
        "title": section.__name__,
        "additionalProperties": False,
        "properties": properties,
    }
    if section.__doc__:
        out["description"] = section.__doc__.split("\n\n")[0].strip()
    required = [name for name, spec in section.model_fields.items() if spec.required]
    if required:
        out["required"] = required
    return out


def plan_json_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of a plan, from the same field table that validates one: the
    body of ``/v1/forecast`` and the keys of a plan file, each number with its bounds."""
    defs = {s.__name__: _section_schema(s) for s in (*_SECTIONS.values(), ExtraGroup)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **_section_schema(Plan),
        "$defs": dict(sorted(defs.items())),
    }


def _describe(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc)


def _allowed_keys(loc: tuple[int | str, ...]) -> list[str]:
    if len(loc) == 1:
        return list(Plan.model_fields)
    if len(loc) >= 3 and loc[:2] == ("cluster", "extra_groups"):
        return list(ExtraGroup.model_fields)
    section = _SECTIONS.get(str(loc[0]))
    return list(section.model_fields) if section else []


def _fields() -> dict[str, FieldSpec]:
    """``section.field`` (``cluster.extra_groups.count`` for extra groups) → its rule."""
    out: dict[str, FieldSpec] = {}
    for name, section in _SECTIONS.items():
        out.update({f"{name}.{f}": spec for f, spec in section.model_fields.items()})
    out.update({f"cluster.extra_groups.{f}": s for f, s in ExtraGroup.model_fields.items()})
    return out


_FIELDS = _fields()


def _num(x: float) -> str:
    """1,000,000 or 1e+15 or 0.5, never 1000000000000000."""
    if float(x).is_integer() and abs(x) < 1e7:
        return f"{int(x):,}"
    return f"{x:.3g}"


def _allowed_range(path: str) -> str:
    """``0 to 1e+09 (an exabyte)`` for a bounded field, from its constraints and
    ``PLAN_CAPS``; empty when the field has no numeric bounds."""
    spec = _FIELDS.get(path)
    if spec is None:
        return ""
    bounds = {
        name: value
        for name, value in (("ge", spec.ge), ("gt", spec.gt), ("le", spec.le))
        if value is not None
    }
    low = (
        f"{_num(bounds['ge'])} to "
        if "ge" in bounds
        else f"above {_num(bounds['gt'])}, up to "
        if "gt" in bounds
        else "up to "
    )
    if "le" not in bounds:
        return ""
    cap = PLAN_CAPS.get(path)
    why = f" ({cap.why})" if cap is not None and cap.high >= _SANITY_BOUND else ""
    return f"{low}{_num(bounds['le'])}{why}"


def _shown(value: Any) -> str:
    """The offending value as typed, cut short: a 400-digit integer must not fill the screen."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-4:]}, {len(text)} characters"


def _format_error(err: Mapping[str, Any]) -> tuple[str, str]:
    loc = tuple(err.get("loc", ()))
    field = _describe(loc) or "plan"
    kind = err.get("type", "")
    got = _shown(err.get("input"))
    if kind == "extra_forbidden":
        keys = _allowed_keys(loc)
        last = str(loc[-1]) if loc else ""
        return field, f"unknown key.{suggest(last, keys)} Allowed: {', '.join(keys)}"
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return field, f"{got} is not allowed; allowed values: {expected}"
    allowed = _allowed_range(".".join(str(p) for p in loc if not isinstance(p, int)))
    allowed = f"; allowed: {allowed}" if allowed else ""
    if kind in {"less_than_equal", "less_than"}:
        bound = err.get("ctx", {}).get("le", err.get("ctx", {}).get("lt"))
        if isinstance(bound, int | float):
            op = "at most" if kind == "less_than_equal" else "below"
            if abs(bound) < _SANITY_BOUND:
                return field, f"must be {op} {_num(bound)}{allowed} (got {got})"
            return (
                field,
                (
                    f"must be {op} {_num(bound)}: too large for any real run, a typo? (got "
                    f"{got}{allowed})"
                ),
            )
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind in {"greater_than", "greater_than_equal"}:
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind.endswith(("_parsing", "_type")):
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind == "value_error":
        message = str(err["msg"]).removeprefix("Value error, ")
        return field if loc else "plan", message
    return field, f"{err['msg']}{allowed} (got {got})"


def _spec_error(errors: list[dict[str, Any]], source: str) -> SpecError:
    """The first problem as one line, naming the field, with how many more there are."""
    field_name, message = _format_error(errors[0])
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return SpecError(message + more, source=source, field=field_name)


def plan_from_dict(data: Mapping[str, Any], *, source: str = "plan") -> Plan:
    """Validate a plan mapping; raise ``SpecError`` naming the source, field and allowed values."""
    errors: list[dict[str, Any]] = []
    plan = _validate(Plan, dict(data), (), errors)
    if errors or plan is None:
        raise _spec_error(errors, source)
    return plan


def load_plan(path: Path | str) -> Plan:
    """Read and validate a plan TOML file (through the input gate, ``trainbill._io``: a regular
    file under the plan size cap). Malformed TOML reports line and column."""
    from trainbill._io import read_input_text

    p = Path(path)
    text = read_input_text(p, kind="plan", what="plan file")
    return plan_from_toml(text, source=str(p))


def read_plan_toml(text: str, *, source: str = "plan") -> dict[str, Any]:
    """Parse plan TOML text into a mapping (not yet validated); ``SpecError`` names the source
    and the line and column of malformed TOML, a nesting or number past the input gate's caps
    (``trainbill._io.parse_toml``). The web calculator's upload reads files here, so a file and
    an upload get the same messages."""
    from trainbill._io import parse_toml

    return parse_toml(text, source=source)


def plan_from_toml(text: str, *, source: str = "plan") -> Plan:
    """Parse and validate plan TOML text (a file's contents, an upload)."""
    data = read_plan_toml(text, source=source)
    try:
        return plan_from_dict(data, source=source)
    except RecursionError:  # validation recurses per nesting level
        raise SpecError(too_deep_message(), source=source) from None


def _toml_value(v: Any) -> str:
    """A TOML literal: every control character escaped, so a name with a newline or a quote
    cannot break out of its string (the web page writes plans whose names came from a URL)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, date):
        return v.isoformat()
    text = str(v).replace("\\", "\\\\").replace('"', '\\"')
    text = "".join(f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch for ch in text)
    return f'"{text}"'


def plan_to_toml(plan: Plan, *, header: str = "") -> str:
    """Serialise a plan as TOML that ``load_plan`` reads back to an equal plan."""
    data = plan.model_dump(exclude_none=True)
    lines = [f"# {h}" if h else "#" for h in header.splitlines()] if header else []
    for section, values in data.items():
        scalars = {k: v for k, v in values.items() if not isinstance(v, list | tuple | dict)}
        groups = {
            k: v
            for k, v in values.items()
            if isinstance(v, list | tuple) and v and isinstance(v[0], dict)
        }
        if scalars:
            lines += ["", f"[{section}]"] + [f"{k} = {_toml_value(v)}" for k, v in scalars.items()]
        for key, items in groups.items():
            for item in items:
                lines += ["", f"[[{section}.{key}]]"]
                lines += [f"{k} = {_toml_value(v)}" for k, v in item.items() if v is not None]
    return "\n".join(lines).lstrip("\n") + "\n"


def merge_plan_dicts(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge two plan mappings section by section; ``override`` wins (flags over file)."""
    out: dict[str, Any] = {k: dict(v) if isinstance(v, Mapping) else v for k, v in base.items()}
    for key, val in override.items():
        if isinstance(val, Mapping) and isinstance(out.get(key), dict):
            out[key].update(val)
        else:
            out[key] = dict(val) if isinstance(val, Mapping) else val
    return out
