"""Classify every normalised bill row into one category, as one Ibis ``CASE`` expression.

The rules are ordered; the first that matches wins, so every row lands in exactly one
category and the categories always sum to the file's total. In order:

1. ``tax``: ChargeCategory Tax (CUR ``Tax``).
2. ``credit``: ChargeCategory Credit (CUR ``Credit``). Refunds keep the category of what they
   refund (FOCUS semantics), so they fall through to the rules below with a negative amount.
3. ``discount``: CUR discount line items (``EdpDiscount``, ``PrivateRateDiscount``, …).
4. ``support``: support plans (service name or FOCUS 1.1 subcategory "Support").
5. ``compute`` (committed): Savings Plan / RI fees and negations for non-database services.
6. ``networking``: NAT gateway hours and bytes (billed under AmazonEC2, REFERENCE §6.4) and
   public IPv4 addresses (AmazonVPC), before the transfer rule because NAT bytes are "GB".
7. ``data_transfer``: ``DataTransfer-*``, ``*-Out-Bytes``/``*-In-Bytes``, ``InterZone-*``
   usage types, or descriptions that say "data transfer"/"bandwidth" or name such a usage
   type (``… per GB for EUN1-AWS-Out-Bytes``), under any service.
8. ``networking``: load balancers, VPC, and anything FOCUS calls Networking.
9. ``monitoring``: CloudWatch, X-Ray, Azure Monitor/Log Analytics, subcategory Observability.
10. ``compute``: GPU instance hours billed through SageMaker (``ml.p5.48xlarge``). These are the
    training GPUs themselves; counting them as orchestration would hide the compute.
11. ``other``: databases and FOCUS categories a training bill does not model (Databases,
    Integration, Security, …), and security add-ons (Defender, GuardDuty).
12. ``storage``: EBS (``EBS:``), S3, FSx, EFS, snapshots, managed disks, container registries
    (ECR, Artifact Registry: the training images, billed per GB-month), FOCUS Storage.
13. ``orchestration``: SageMaker (everything else), EKS, AKS, GKE, AWS Batch.
14. ``compute``: instance usage types, an identified instance type, FOCUS Compute, EC2,
    Lambda, Fargate, virtual machines.
15. ``other``: a known service outside these categories (a CUR product code no rule knows).
16. ``other`` + uncategorized: nothing identifies the row (no rule matched and its
    ServiceCategory is missing or "Other"). These rows are counted and reported, never dropped.

Compute rows are split by purchase option: ``spot`` (PricingCategory Dynamic), ``committed``
(Committed, or any commitment-discount row) and ``on_demand`` (the rest). A compute row is a
*GPU instance* row when its instance type is in an accelerator family (REFERENCE §2.3), or
GPU compute (cost, no instance-hours) when it is a Google Cloud GPU or accelerator-machine SKU.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BILL_CATEGORIES", "GPU_INSTANCE_RE", "PURCHASE_OPTIONS", "classify"]

#: Categories a bill row can land in, in presentation order. The ledger's names plus the
#: bill-only ``support``, ``tax``, ``credit`` and ``other``.
BILL_CATEGORIES: tuple[str, ...] = (
    "compute",
    "storage",
    "data_transfer",
    "networking",
    "monitoring",
    "orchestration",
    "support",
    "discount",
    "credit",
    "tax",
    "other",
)
PURCHASE_OPTIONS: tuple[str, ...] = ("on_demand", "spot", "committed")

#: Accelerator instance families (AWS p*/g*/trn*/inf*/dl*, SageMaker ``ml.`` forms, Azure N-series).
GPU_INSTANCE_RE = (
    r"^(ml\.)?(p[2-9][a-z0-9-]*|gr?[3-9][a-z0-9-]*|trn[0-9][a-z0-9]*|inf[0-9][a-z0-9]*"
    r"|dl[0-9][a-z0-9]*)\.|^standard_n[cdv]"
)
#: Google Cloud bills an accelerator VM as SKUs, not as an instance type: the GPUs per GPU-hour
#: ("Nvidia H100 80GB GPU running in Americas"), the accelerator-optimized machine's cores and
#: memory per vCPU-hour and GB-hour ("A3 Instance Core running in Americas"), TPUs per
#: chip-hour ("TPU v5p chip running in Americas"), each also as Spot/Preemptible SKUs: GPU
#: compute by description (lower-cased). Their quantities are not instance-hours, so they add
#: no ``gpu_hours``.
GPU_SKU_DESC_RE = (
    r"\bnvidia\b.*\bgpu\b"  # "Nvidia H100 80GB GPU running in …", "Spot Preemptible Nvidia …"
    r"|\b(a2|a3|a4|g2)[a-z0-9]*( [a-z]+)? instance (core|ram)\b"  # "A3Mega Instance Core …"
    r"|\btpu ?v[0-9]+[a-z]*\b.*\bchip\b"  # "TPU v5p chip running in …", "Preemptible TPU …"
)
_DISCOUNT_TYPES = [
    "bundleddiscount",
    "discount",
    "edpdiscount",
    "privateratediscount",
    "distributordiscount",
]
_FEE_TYPES = ["savingsplanrecurringfee", "savingsplanupfrontfee", "rifee"]
_NEGATION = "savingsplannegation"
#: Database, search and streaming services (CUR product codes too: OpenSearch is ``AmazonES``,
#: MSK ``AmazonMSK``): their instance usage types (``ESInstance:r6g.large``) are not compute.
_DB_SERVICE = (
    r"rds|relational database|elasticache|redshift|opensearch|^amazones$|dynamodb|documentdb|"
    r"neptune|amazonmsk|managed streaming for (apache )?kafka"
)
_TRANSFER_UT = r"datatransfer|-out-bytes|-in-bytes|interzone|cloudfront-(out|in)|aws-(out|in)-"
# Descriptions name transfer in words, or (FOCUS exports without x_UsageType) by the usage type
# itself: "USD 0.02 per GB for EUN1-AWS-Out-Bytes", "... for DataTransfer-Out-Bytes ...".
_TRANSFER_DESC = (
    r"data transfer|bandwidth|transfer out|transfer in\b|datatransfer-|-(out|in)-bytes\b|"
    r"interzone-(in|out)\b"
)
_NETWORK_SVC = (
    r"virtual private cloud|amazonvpc|elastic load balancing|awselb|route ?53|vpc|"
    r"load balancer|cloudfront|direct connect|transit gateway|network"
)
_MONITOR_SVC = (
    r"cloudwatch|x-ray|xray|azure monitor|log analytics|managed grafana|"
    r"managed service for prometheus|cloud monitoring|cloud logging"
)
_ORCH_SVC = r"sagemaker|kubernetes|\beks\b|amazoneks|\baks\b|\bgke\b|aws ?batch|parallelcluster"
_OTHER_CATS = (
    r"^(databases|analytics|business applications|developer tools|identity|integration|"
    r"internet of things|media|migration|mobile|multicloud|security|web)$"
)
_STORAGE_SVC = (
    r"simple storage service|amazons3|\bs3\b|fsx|elastic file system|amazonefs|\bebs\b|"
    r"glacier|backup|block_storage|object_storage|storage|container registry|\becr\b|"
    r"artifact registry"
)
_STORAGE_UT = r"^(ebs:|timedstorage|requests-tier|snapshot|fsx|efs|storage)"
_STORAGE_DESC = r"managed disk|snapshot|provisioned storage|block volume|\bebs\b"
_COMPUTE_UT = r"^(boxusage|spotusage|dedicatedusage|hostusage|heavyusage|reservedhostusage)"
_COMPUTE_SVC = r"elastic compute cloud|amazonec2|virtual machine|compute|lambda|fargate"


def _m(col: Any, pattern: str) -> Any:
    """Null-safe regex "find" (RE2 and Java agree on this subset)."""
    import ibis

    return ibis.coalesce(col.re_search(pattern), ibis.literal(False))


def _eq(col: Any, value: str) -> Any:
    import ibis

    return ibis.coalesce(col == value, ibis.literal(False))


def classify(n: Any) -> Any:
    """Add the classification columns to a normalised table.

    Added: ``category``; ``option`` (compute purchase option, else null); ``gpu`` (1 for GPU
    instance usage, including SP negations of it); ``fee`` (1 for commitment purchase rows,
    which carry no instance type); ``negation``; ``uncat``; ``gpu_hours`` (instance-hours of GPU
    usage rows, excluding fees and negations so covered hours are not counted twice).
    """
    # Three stages (row flags, category, what depends on the category), each its own
    # ``mutate``: Ibis emits one nested SELECT per stage, so every regex appears once in the SQL.
    # As one expression, each use of ``category`` inlined the whole CASE: the SQL was ~1,800
    # lines and DuckDB spent ~0.07 s of a ~0.6 s summary binding it.
    f = _row_flags(n)
    return _by_category(f.mutate(category=_category(f)))


def _row_flags(n: Any) -> Any:
    """Stage 1: the row flags the category and the later columns read (``_``-prefixed, dropped
    at the end): the line-item type, GPU instance or SKU, commitment fee or commitment row."""
    import ibis

    lit = ibis.coalesce(n.lit, ibis.literal(""))
    not_db = ~_m(n.svc, _DB_SERVICE)
    fee = (lit.isin(_FEE_TYPES) | (_eq(n.charge, "purchase") & n.commit)) & not_db
    return n.mutate(
        _lit=lit,
        _gpu_instance=_m(n.instance, GPU_INSTANCE_RE),
        _gpu_sku=_m(n.desc, GPU_SKU_DESC_RE),
        _commitment_fee=fee,
        _commitment_row=fee | ((lit == _NEGATION) & not_db),
    )


def _category(f: Any) -> Any:
    """Stage 2: the ledger category of each flagged row, the first rule that matches."""
    import ibis

    svc, ut, desc, cat, lit = f.svc, f.usage_type, f.desc, f.svc_cat, f._lit
    return ibis.cases(
        (_eq(f.charge, "tax") | (lit == "tax"), "tax"),
        (_eq(f.charge, "credit") | (lit == "credit"), "credit"),
        (lit.isin(_DISCOUNT_TYPES), "discount"),
        (_m(svc, r"support") | _eq(f.subcat, "support"), "support"),
        (f._commitment_row, "compute"),
        (
            _m(ut, r"^natgateway|publicipv4|elasticip:|idleaddress")
            | _m(desc, r"nat gateway|public ipv4|ipv4 address|ip addresses"),
            "networking",
        ),
        (_m(ut, _TRANSFER_UT) | _m(desc, _TRANSFER_DESC), "data_transfer"),
        (_m(svc, _NETWORK_SVC) | _eq(cat, "networking"), "networking"),
        (
            _m(svc, _MONITOR_SVC) | _eq(f.subcat, "observability") | _m(ut, r"^cw:"),
            "monitoring",
        ),
        (_m(svc, r"sagemaker") & f._gpu_instance, "compute"),
        # The EBS-optimized surcharge of an instance (``EBSOptimized:p3.2xlarge``, "… EBS
        # Optimized …") is compute, though its description names EBS.
        (_m(ut, r"^ebsoptimized:"), "compute"),
        (
            _m(svc, _DB_SERVICE)
            | _m(cat, _OTHER_CATS)
            | _m(desc, r"microsoft defender|security hub|guardduty"),
            "other",
        ),
        (
            _m(ut, _STORAGE_UT)
            | _m(svc, _STORAGE_SVC)
            | _eq(cat, "storage")
            | _m(desc, _STORAGE_DESC),
            "storage",
        ),
        (_m(svc, _ORCH_SVC), "orchestration"),
        (
            _m(ut, _COMPUTE_UT)
            | f.instance.notnull()
            | _eq(cat, "compute")
            | _m(svc, _COMPUTE_SVC)
            | _m(desc, r"fargate|instance hour|vcpu"),
            "compute",
        ),
        else_="other",
    )


def _by_category(c: Any) -> Any:
    """Stage 3: what depends on the category (purchase option, GPU, fee, negation,
    uncategorised, GPU-hours), with the stage-1 flags dropped."""
    import ibis

    other = c.category == "other"
    compute = c.category == "compute"
    recognised_other = c.svc_cat.notnull() & (c.svc_cat != "other")
    uncat = ibis.cases(
        (other & ~recognised_other & c.svc_cat.notnull(), 1),
        (other & c.svc_cat.isnull() & c.svc.isnull() & c.usage_type.isnull(), 1),
        else_=0,
    ).cast("int64")
    option = ibis.cases(
        (~compute, ibis.null("string")),
        (_eq(c.pricing, "dynamic") | _m(c.usage_type, r"^spotusage"), "spot"),
        (_eq(c.pricing, "committed") | c.commit | c._commitment_row, "committed"),
        else_="on_demand",
    )
    gpu_instance = compute & c._gpu_instance & ~c._commitment_fee
    gpu = gpu_instance | (compute & c._gpu_sku & ~c._commitment_fee)
    hour_unit = _m(c.unit, r"^(hrs|hours?)$|^hour|instance-hours?")
    gpu_hours = ibis.cases(
        (
            gpu_instance
            & hour_unit
            # the instance's hours are its BoxUsage rows; the surcharge's would count them twice
            & ~_m(c.usage_type, r"^ebsoptimized:")
            & ~c._lit.isin([*_FEE_TYPES, _NEGATION])
            & c.quantity.notnull(),
            c.quantity,
        ),
        else_=ibis.literal(0).cast(c.quantity.type()),
    )
    return c.mutate(
        option=option,
        gpu=gpu.cast("int64"),
        fee=(compute & c._commitment_fee).cast("int64"),
        negation=(c._lit == _NEGATION).cast("int64"),
        uncat=uncat,
        gpu_hours=gpu_hours,
    ).drop("_lit", "_gpu_instance", "_gpu_sku", "_commitment_fee", "_commitment_row")
