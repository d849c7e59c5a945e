"""What a bill is, from its columns alone: FOCUS 1.0-1.2 or AWS CUR 2.0 (and legacy CUR read
under CUR 2.0's names), the columns each must have, and the records describing the files.

No file is opened here: ``_files`` reads the headers (the one module that touches bill files
itself, through the input gate's checks) and ``detect`` decides from what it read, so the
rules can be tested on column lists.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from trainbill._record import record
from trainbill.errors import BillError, UnsupportedBillError

#: Columns a FOCUS file must have for us to read it. All are Mandatory in FOCUS 1.0-1.2.
FOCUS_REQUIRED: tuple[str, ...] = (
    "BilledCost",
    "EffectiveCost",
    "ListCost",
    "BillingCurrency",
    "ChargeCategory",
    "ServiceCategory",
    "ServiceName",
    "ChargePeriodStart",
    "BillingPeriodStart",
    "BillingPeriodEnd",
)
#: Columns added in FOCUS 1.1 and 1.2 (REFERENCE §1.2, "Version deltas"); used to name the version.
FOCUS_11_COLUMNS = frozenset(
    c.lower()
    for c in (
        "CapacityReservationId",
        "CapacityReservationStatus",
        "CommitmentDiscountQuantity",
        "CommitmentDiscountUnit",
        "ServiceSubcategory",
        "SkuMeter",
        "SkuPriceDetails",
    )
)
FOCUS_12_COLUMNS = frozenset(
    c.lower()
    for c in (
        "BillingAccountType",
        "SubAccountType",
        "InvoiceId",
        "PricingCurrency",
        "PricingCurrencyContractedUnitPrice",
        "PricingCurrencyEffectiveCost",
        "PricingCurrencyListUnitPrice",
    )
)
#: Columns an AWS CUR 2.0 (Data Exports ``COST_AND_USAGE_REPORT``) file must have.
CUR2_REQUIRED: tuple[str, ...] = (
    "line_item_line_item_type",
    "line_item_unblended_cost",
    "line_item_currency_code",
    "line_item_product_code",
    "line_item_usage_type",
    "line_item_usage_start_date",
    "bill_billing_period_start_date",
    "bill_billing_period_end_date",
)
_LEGACY_CUR_MARKERS = ("lineitem/usagetype", "lineitem/unblendedcost", "identity/lineitemid")


def canonical_column(name: str) -> str:
    """The name a bill column is looked up by: its lower-case spelling, and a legacy CUR CSV
    column (``lineItem/UnblendedCost``, ``savingsPlan/SavingsPlanARN``,
    ``resourceTags/user:Team``) under the name AWS gives it in CUR 2.0 and in legacy CUR's own
    Athena/Parquet files (``line_item_unblended_cost``, ``savings_plan_savings_plan_a_r_n``,
    ``resource_tags_user_team``; REFERENCE §2.1): one reader then serves both, with every
    query still using the file's real spelling (``BillFormat.col``)."""
    if "/" not in name:
        return name.lower()
    category, _, attribute = name.partition("/")
    return f"{_snake(category)}_{_snake(attribute)}"


def _snake(part: str) -> str:
    """``SavingsPlanARN`` -> ``savings_plan_a_r_n``, ``user:Team`` -> ``user_team`` (an
    underscore before every capital but the first, other punctuation as one underscore)."""
    spaced = re.sub(r"(?<=.)([A-Z])", r"_\1", part.strip())
    return re.sub(r"[^0-9a-z]+", "_", spaced.lower()).strip("_")


def _legacy(file: BillFile) -> bool:
    """A legacy CUR CSV file (``lineItem/UsageType`` columns)."""
    return any(c.lower() in _LEGACY_CUR_MARKERS for c in file.columns)


@record
class BillFile:
    """One data file and its header, so later steps never reopen it just to look at columns."""

    path: Path  # for kind "table" (Trino/Athena), the table name, only ever displayed
    kind: str  # "csv", "parquet" or "table"
    columns: tuple[str, ...]
    #: A remote file or folder (``s3a://bucket/key``, Spark only), read by the engine where it
    #: is; ``path`` cannot hold it (``Path`` folds ``//``). ``None`` for local files.
    uri: str | None = None

    @property
    def location(self) -> str:
        """Where the engine reads the file: its URI, else its local path."""
        return self.uri if self.uri is not None else str(self.path)

    @property
    def local(self) -> bool:
        """Whether this process can open the file itself (error-path row searches)."""
        return self.kind != "table" and self.uri is None


@record
class BillFormat:
    """What a set of files is: ``family`` ("focus"/"cur"), a display ``name`` and the columns.

    ``columns`` maps lower-case column names (``canonical_column``: a legacy CUR column under
    its CUR 2.0 name) to the spelling in the files, because real exports vary in case and the
    queries must use the real spelling.
    """

    family: str
    name: str
    columns: Mapping[str, str]
    files: tuple[BillFile, ...]

    def has(self, column: str) -> bool:
        """Whether any file has ``column`` (case-insensitive; CUR 2.0 names find legacy CUR's)."""
        return canonical_column(column) in self.columns

    def col(self, column: str) -> str:
        """The real spelling of ``column``."""
        return self.columns[canonical_column(column)]


def _family(file: BillFile) -> str:
    lower = {canonical_column(c) for c in file.columns}
    focus_hits = sum(c.lower() in lower for c in FOCUS_REQUIRED)
    cur_hits = sum(c in lower for c in CUR2_REQUIRED)
    if focus_hits == 0 and cur_hits == 0:
        if len(file.columns) == 1:
            for sep, label in ((";", "semicolons"), ("\t", "tabs"), ("|", "pipes")):
                if sep in file.columns[0]:
                    raise UnsupportedBillError(
                        f"{file.path}: the header is separated by {label}, not commas; bills "
                        "must be comma-separated CSV (as FOCUS and CUR 2.0 exports are)"
                    )
        shown = ", ".join(file.columns[:8]) + (", …" if len(file.columns) > 8 else "")
        raise UnsupportedBillError(
            f"{file.path}: unknown bill format (columns: {shown}); expected FOCUS 1.0-1.2 "
            f"columns ({', '.join(FOCUS_REQUIRED)}) or AWS CUR 2.0 columns "
            f"({', '.join(CUR2_REQUIRED)})"
        )
    family = "focus" if focus_hits >= cur_hits else "cur"
    required = FOCUS_REQUIRED if family == "focus" else CUR2_REQUIRED
    missing = [c for c in required if c.lower() not in lower]
    if missing:
        label = "FOCUS" if family == "focus" else "AWS CUR 2.0"
        if _legacy(file):
            label = "AWS legacy CUR (its columns read under their CUR 2.0 names)"
        raise UnsupportedBillError(
            f"{file.path}: looks like {label} but lacks required column(s) "
            f"{', '.join(missing)}; required: {', '.join(required)}"
        )
    return family


def detect(files: Sequence[BillFile]) -> BillFormat:
    """Decide the format of a set of files; all must be the same family.

    Raises:
        UnsupportedBillError: unknown columns, missing required columns, legacy CUR, or a mix
            of FOCUS and CUR files in one call.
    """
    if not files:
        raise BillError("no bill files to read")
    families = {f.path: _family(f) for f in files}
    kinds = set(families.values())
    if len(kinds) > 1:
        listing = "; ".join(f"{p}: {k}" for p, k in families.items())
        raise UnsupportedBillError(
            f"cannot mix FOCUS and CUR 2.0 files in one bill ({listing}); read them separately"
        )
    family = kinds.pop()
    legacy = {f.path: _legacy(f) for f in files}
    if len(set(legacy.values())) > 1:
        # One column, two spellings (``lineItem/UnblendedCost``, ``line_item_unblended_cost``):
        # the engines union files by name and would read each half of the bill under one.
        listing = "; ".join(f"{p}: {'legacy' if v else '2.0'}" for p, v in legacy.items())
        raise UnsupportedBillError(
            f"cannot mix legacy CUR and CUR 2.0 files in one bill ({listing}); read them separately"
        )
    columns: dict[str, str] = {}
    for f in files:
        for c in f.columns:
            columns.setdefault(canonical_column(c), c)
    if family == "cur":
        # Legacy CUR's own Parquet (Athena) files use CUR 2.0's snake_case names, but keep one
        # column per tag (``resource_tags_user_team``) where CUR 2.0 has the ``resource_tags``
        # map (REFERENCE §2.1); without a tag column the two cannot be told apart.
        athena = any(c.startswith("resource_tags_") for c in columns)
        name = "cur-legacy" if any(legacy.values()) or athena else "cur-2.0"
    elif FOCUS_12_COLUMNS & columns.keys():
        name = "focus-1.2"
    elif FOCUS_11_COLUMNS & columns.keys():
        name = "focus-1.1"
    else:
        name = "focus-1.0"
    return BillFormat(family=family, name=name, columns=columns, files=tuple(files))
