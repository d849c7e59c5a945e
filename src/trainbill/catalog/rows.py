"""Catalog rows: the frozen records the catalog files are read into, and the vocabularies
(providers, purchase options, the stand-in mark) their columns are checked against.

No I/O and no look-ups here: ``trainbill.catalog.loading`` builds these from files,
``trainbill.catalog.lookups.Catalog`` indexes and answers questions about them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from enum import StrEnum
from typing import Any

from trainbill._record import record
from trainbill.errors import SpecError

__all__ = [
    "OPTIONS",
    "PRECISIONS",
    "PROVIDERS",
    "SCHEMA_VERSION",
    "STAND_IN_MARK",
    "Accelerator",
    "Assumption",
    "BillRates",
    "Instance",
    "PricePoint",
    "Provenance",
    "SpotAdvisorRow",
    "human_value",
]

#: Bumped whenever a table's columns change; overlays and caches must match it.
SCHEMA_VERSION = 1
PROVIDERS: tuple[str, ...] = ("aws", "gcp", "azure")
#: Training precisions, most to least precise: the plan's ``model.precision`` values and the
#: columns of the peak tables (``accelerators.csv`` for bf16 and fp8, ``accelerator_peaks.csv``
#: for the others).
PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")
#: How a row's source marks a stand-in: a figure no provider publishes, kept so a what-if (an
#: H800 cluster, a trn2 On-Demand rate) can be priced at all. The planner never recommends a
#: stand-in unless asked (``optimize(allow_stand_ins=True)``, ``--allow-stand-ins``).
STAND_IN_MARK = "STAND-IN"
#: How a row's source marks a price the catalog could not check against the provider's own
#: price list (a secondary source, a figure carried back in time, a recollection): the word
#: ``UNVERIFIED`` anywhere in it, written so by whoever added the row.
UNVERIFIED_MARK = "UNVERIFIED"


class Provenance(StrEnum):
    """Where a price comes from, as a field code reads (never a phrase searched in a source).

    Members are ordered by how much a reader must be told about them, least first, and a figure
    worked out of several prices has the provenance of the last (``weakest``): a line blending a
    published on-demand rate with another region's spot rate is a reference-region line.
    """

    #: A price the provider publishes for the plan's own region (or a zone of it).
    PUBLISHED = "published"
    #: Overhead dollars per node-hour fitted from the organisation's own bills
    #: (``trainbill.calibration``): measured, but not a list price.
    BILLS = "bills"
    #: A price the provider sells at whose figure the catalog could not check against the
    #: provider's price list (source marked ``UNVERIFIED``): likely right, not confirmed.
    UNVERIFIED = "unverified"
    #: A catalog stand-in (source begins ``STAND-IN``): a figure no provider publishes.
    STAND_IN = "stand_in"
    #: The plan's region has no price point: the provider's reference region (or any region
    #: that has one) stands in, and the forecast warns (``CautionKind.REFERENCE_REGION``).
    REFERENCE_REGION = "reference_region"
    #: The catalog has no price of the charging provider: the line is $0 and the forecast warns.
    UNPRICED = "unpriced"

    @staticmethod
    def weakest(*provenances: Provenance) -> Provenance:
        """The one of several a reader must be told about first (``PUBLISHED`` for none)."""
        order = tuple(Provenance)
        return max(provenances, key=order.index, default=Provenance.PUBLISHED)


#: Purchase options a price point can carry. Commitment rates are the provider's published
#: effective hourly rate under a commitment, one option per kind and term: ``sp_<term>`` is an
#: AWS EC2 Instance Savings Plan (what ``trainbill prices update aws`` writes), a GCP
#: committed-use or an Azure reservation rate; ``compute_sp_<term>`` an AWS Compute Savings
#: Plan; ``sagemaker_sp_<term>`` an AWS SageMaker Savings Plan on an ``ml.*`` item;
#: ``standard_ri_<term>`` / ``convertible_ri_<term>`` an AWS EC2 Standard / Convertible Reserved
#: Instance (the proxy of an EC2 Instance / Compute Savings Plan rate that is not published,
#: ``costs._pricing.commitment_rate_for``). The payment option (No/Partial/All Upfront) a rate
#: assumes is stated in its source.
OPTIONS: tuple[str, ...] = (
    "on_demand", "spot", "sp_1yr", "sp_3yr", "compute_sp_1yr", "compute_sp_3yr",
    "sagemaker_sp_1yr", "sagemaker_sp_3yr", "capacity_block",
    "standard_ri_1yr", "standard_ri_3yr", "convertible_ri_1yr", "convertible_ri_3yr",
)  # fmt: skip


@record
class Accelerator:
    """One accelerator model's datasheet figures (dense, no sparsity)."""

    id: str
    name: str
    vendor: str
    peak_bf16_tflops: float
    peak_fp8_tflops: float | None
    hbm_gb: float
    hbm_tbps: float
    intra_node_gbytes_per_s: float
    #: When the architecture's first datacenter part became generally available (shipping
    #: systems, a public cloud instance, or in-house production for TPUs); the time model's
    #: software-maturity factor counts from it. ``None``: unknown, software taken as mature.
    launched: date | None
    source: str
    as_of: date
    #: Other names a user types for this part (``a100`` for ``a100-40gb``, ``trn1`` for
    #: ``trainium1``), already in ``accelerator_key`` form; the row's source says why an
    #: ambiguous one (``a100``) means this part.
    aliases: tuple[str, ...] = ()

    #: Dense peaks at the precisions ``accelerator_peaks.csv`` lists for this part (``fp16``,
    #: ``tf32``, ``fp32``): (precision, TFLOP/s, source), each from the vendor's datasheet.
    peaks: tuple[tuple[str, float, str], ...] = ()

    def listed_peak(self, precision: str) -> tuple[float, str] | None:
        """(TFLOP/s, source) of ``precision`` from ``accelerator_peaks.csv``, or None."""
        for name, tflops, source in self.peaks:
            if name == precision:
                return tflops, source
        return None

    def precision_peak(self, precision: str) -> tuple[float, str] | None:
        """(dense TFLOP/s, why) the part runs ``precision``'s matmuls at, or None if no public
        figure exists (TPUs publish no FP32 rate; their matrix units run BF16).

        The rules, each the hardware's: FP8 falls back to BF16 on parts without FP8 units (the
        framework then runs BF16); FP16 runs at the BF16 tensor rate unless the part lists its
        own (every part in the catalog with both formats runs them at one rate, so a part lists
        an FP16 figure only when it has no BF16 units: V100, T4, ``bf16_units``); TF32 on a part
        without TF32
        units (Volta, Turing, CDNA 2, TPUs) is FP32 arithmetic, so it runs at the FP32 rate.
        """
        if precision == "bf16":
            return self.peak_bf16_tflops, "dense BF16 (accelerators.csv)"
        if precision == "fp8":
            if self.peak_fp8_tflops is not None:
                return self.peak_fp8_tflops, "dense FP8 (accelerators.csv)"
            return self.peak_bf16_tflops, "no FP8 units: BF16 rate (accelerators.csv)"
        listed = self.listed_peak(precision)
        if listed is not None:
            return listed[0], listed[1]
        if precision == "fp16":
            return self.peak_bf16_tflops, "FP16 at the BF16 tensor rate (accelerators.csv)"
        if precision == "tf32":
            fp32 = self.listed_peak("fp32")
            if fp32 is not None:
                return fp32[0], f"no TF32 units: FP32 rate ({fp32[1]})"
        return None

    @property
    def bf16_units(self) -> bool:
        """Whether the part has BF16 units. A part without them (Volta, Turing) lists its FP16
        tensor rate in ``accelerator_peaks.csv``, and its ``peak_bf16_tflops`` carries that FP16
        figure (the column is required), so a BF16 forecast on it needs a warning."""
        return self.listed_peak("fp16") is None

    def precisions(self) -> tuple[str, ...]:
        """The precisions this part has a peak for, in ``PRECISIONS`` order."""
        return tuple(p for p in PRECISIONS if self.precision_peak(p) is not None)

    def peak_tflops(self, precision: str) -> float:
        """Dense peak for a precision (``precision_peak``).

        Raises:
            SpecError: on ``model.precision``, naming the precisions the part has, when the
                catalog has no public peak for this one (never a guessed conversion).
        """
        found = self.precision_peak(precision)
        if found is None:
            msg = (
                f"{precision!r} has no published peak for {self.id} in the catalog "
                f"(accelerator_peaks.csv); allowed on {self.id}: {', '.join(self.precisions())}"
            )
            raise SpecError(msg, field="model.precision")
        return found[0]


@record
class Instance:
    """A rentable machine: which accelerators, how many, and its network."""

    provider: str
    instance: str
    accelerator: str
    accelerator_count: int
    vcpus: int
    memory_gib: float
    network_gbps: float
    billing: str  # "instance" (per instance-hour) or "chip" (per chip-hour, TPUs)
    source: str
    as_of: date
    #: When the provider first sold it (general availability, or public preview where that is
    #: when it could first be rented): no run can be priced on it before this day. ``None``:
    #: unknown (a stand-in, or an overlay written before the column existed).
    launched: date | None = None

    @property
    def stand_in(self) -> bool:
        """A catalog stand-in (source begins ``STAND-IN``), not an instance any cloud sells."""
        return self.source.lstrip().startswith(STAND_IN_MARK)


@record
class PricePoint:
    """A price observed from a source, valid from ``effective_from`` until superseded."""

    provider: str
    region: str
    item: str
    option: str
    unit: str
    usd: float
    effective_from: date
    source: str
    #: The region a look-up asked for when this point is another region's
    #: (``Catalog.find_price``); None for a point of the region asked for.
    stands_in_for: str | None = None

    @property
    def stand_in(self) -> bool:
        """A stand-in figure (source begins ``STAND-IN``), not a price the provider publishes."""
        return self.source.lstrip().startswith(STAND_IN_MARK)

    @property
    def provenance(self) -> Provenance:
        """Another region's point is ``REFERENCE_REGION`` before anything else: the forecast
        must say the plan's region is not what was priced, stand-in or not."""
        if self.stands_in_for is not None:
            return Provenance.REFERENCE_REGION
        if self.stand_in:
            return Provenance.STAND_IN
        return Provenance.UNVERIFIED if UNVERIFIED_MARK in self.source else Provenance.PUBLISHED

    def cite(self, on: date | None = None) -> str:
        """Source and date in one string, for a ledger line's ``source`` field.

        With ``on`` (the plan's price date) it also says how old the price is that day, so a
        reader sees a 700-day-old list price for what it is without opening the catalog.
        """
        text = f"{self.source}; price point effective {self.effective_from.isoformat()}"
        if on is None:
            return text
        age = (on - self.effective_from).days
        if age >= 0:
            return (
                f"{text} (price dated {self.effective_from.isoformat()}, {age} days old on "
                f"{on.isoformat()})"
            )
        return (
            f"{text} (price dated {self.effective_from.isoformat()}, {-age} days AFTER the plan's "
            f"price date {on.isoformat()}: the earliest {self.provider} price point, none is "
            "older)"
        )


@record
class BillRates:
    """Overhead dollars per GPU node-hour by ledger category, fitted from the organisation's own
    bills (``trainbill calibrate``; ``trainbill.calibration.calibrate_catalog`` puts them on a
    catalog). Rates like an overlay's, so they are a catalog input every pricing path sees: the
    ``costs.bill_rates`` step replaces the modelled lines of these categories in a forecast, a
    simulation's trials and the planner's grid alike.
    """

    #: ``ledger.CATEGORIES`` name -> USD per GPU node-hour.
    usd_per_node_hour: Mapping[str, float]
    #: The billing period the rates were fitted over, in words (``2026-04-01 to 2026-05-01``).
    period: str
    #: The bill files they were fitted from, in words.
    files: str
    #: The GPU node-hours on those bills that the dollars were divided by.
    gpu_node_hours: float


@record
class SpotAdvisorRow:
    """A Spot Advisor observation: interruption bucket and savings for an instance/region."""

    provider: str
    region: str
    instance: str
    interruption_bucket: str
    savings_pct: float
    observed: date
    source: str


@record
class Assumption:
    """A modelling assumption or default, with its source: never a bare constant in code."""

    key: str
    value: Any
    unit: str
    source: str
    as_of: date

    def cite(self) -> str:
        """``key = value unit (source, as of date)``, for bases and ``--explain``."""
        return (
            f"{self.key} = {human_value(self.value)} {self.unit} ({self.source}; as of "
            f"{self.as_of})"
        )


def human_value(value: Any) -> str:
    """An assumption's value as a person reads it in ``--explain`` and the report.

    Python's own text is for programmers: ``False``, ``4000000.0``, ``{'<5%': 0.025}``. A reader
    wants yes/no, thousands separators and no trailing ``.0``; very small rates keep three
    significant digits (``0.000474``) rather than rounding to zero.
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.3g}" if abs(value) < 1e-2 else f"{value:,.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {human_value(v)}" for k, v in value.items())
    return str(value)


#: Vendor words a user may put before an accelerator's name ("NVIDIA H100", "AMD Instinct MI300X").
_VENDOR_PREFIXES = ("nvidia-", "amd-instinct-", "amd-", "google-cloud-", "google-", "aws-")


def accelerator_key(name: str) -> str:
    """The form an accelerator name is looked up in: lower case, spaces and underscores as one
    hyphen, without a vendor word in front (``"NVIDIA A100_80GB"`` -> ``"a100-80gb"``).

    Names are typed from datasheets, ``nvidia-smi`` and other tools' configs, which differ only
    in these ways; anything else (``h100-pcie``, a different part) stays distinct.
    """
    key = "-".join(name.strip().lower().replace("_", " ").split())
    for prefix in _VENDOR_PREFIXES:
        if key.startswith(prefix) and len(key) > len(prefix):
            return key[len(prefix) :]
    return key
