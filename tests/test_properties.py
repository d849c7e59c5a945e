"""Property-based tests (Hypothesis, issue #23): whatever a user feeds the plan schema, the
cluster importers or the bill reader, the answer is a result or one of trainbill's own errors
(``TrainbillError``: one line, no traceback), and a bill never loses a row or a nano-dollar.

Deterministic (``derandomize=True``, no example database) and sized to run in a few seconds
each on two cores; regressions the properties found have their own plain tests below them.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
import re
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import TODAY
from trainbill.catalog import load_catalog
from trainbill.cli.forecast import render_forecast
from trainbill.cli.whatif import render_import
from trainbill.errors import TrainbillError
from trainbill.forecasting import forecast
from trainbill.importers import import_text, provenance
from trainbill.spec import PLAN_CAPS, ExtraGroup, FieldSpec, Plan, plan_from_dict

_CATALOG = load_catalog()


def _profile(examples: int) -> Callable[[Any], Any]:
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- values -------------------------------------------------------------------------------

#: Things that are no number a user meant: wrong types, non-finite, separators, other scripts.
_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=1),
    st.sampled_from(["inf", "-inf", "nan", "1e400", "1_000", "0x10", " 5 ", "１２", "", "10%"]),
)
#: Numbers at and past the edges of every range.
_EXTREME = st.sampled_from(
    [0, -1, -0.0, 1e-300, 5e-324, 1e300, 1.7976931348623157e308, 10**30, 2**63, 10**400,
     float("inf"), float("-inf"), float("nan")]
)  # fmt: skip


def _field_info(path: str) -> FieldSpec:
    section, _, key = path.rpartition(".")
    if section == "cluster.extra_groups":
        return ExtraGroup.model_fields[key]
    sub = Plan.model_fields[section].section
    assert sub is not None
    return sub.model_fields[key]


def _valid_number(path: str) -> st.SearchStrategy[Any]:
    """A value inside the field's own range (its ge/gt and its PLAN_CAPS bound)."""
    info = _field_info(path)
    low, strict = 0.0, False
    if info.ge is not None:
        low = float(info.ge)
    if info.gt is not None:
        low, strict = float(info.gt), True
    high = PLAN_CAPS[path].high
    if info.kind == "int":
        lo = int(low) + (1 if strict else 0)
        return st.one_of(st.integers(lo, min(lo + 64, int(high))), st.integers(lo, int(high)))
    small = st.floats(low, min(high, max(low, 1.0) * 100), exclude_min=strict)
    return st.one_of(small, st.floats(low, high, exclude_min=strict))


def _literal(section: Any, key: str) -> st.SearchStrategy[Any]:
    return st.sampled_from(list(section.model_fields[key].choices))


_INSTANCES = [
    *sorted(_CATALOG.instances),
    "m5.xlarge",
    "c5.2xlarge",
    "p5.48xlarg",
    "ml.p5.48xlarge",
]
_GPUS = [*sorted(_CATALOG.accelerators), "h1000", "H100", "a100"]
_REGIONS = [
    *sorted({r for p in ("aws", "gcp", "azure") for r in _CATALOG.regions(p)}),
    "eu-north-7",
    "xx",
]
_ZONES = ["use1-az1", "use1-az4", "us-east-1a", "us-central1-a", "1", "3", "us-east-1z", "nowhere"]
_DATES = st.one_of(
    st.sampled_from(
        ["2023-07-26", "2024-09-01", "2025-05-01", "2026-12-01", "1999-01-01", "2099-01-01"]
    ),
    st.dates(date(1990, 1, 1), date(2100, 1, 1)).map(date.isoformat),
)


def _section_fields(section_name: str) -> dict[str, st.SearchStrategy[Any]]:
    """Valid-looking values for every field of one section, numbers within their caps."""
    section = Plan.model_fields[section_name].section
    assert section is not None
    out: dict[str, st.SearchStrategy[Any]] = {}
    for key, info in section.model_fields.items():
        path = f"{section_name}.{key}"
        if path in PLAN_CAPS:
            out[key] = _valid_number(path)
        elif info.kind == "bool":
            out[key] = st.booleans()
        elif key in ("instance",):
            out[key] = st.sampled_from(_INSTANCES)
        elif key == "gpu":
            out[key] = st.sampled_from(_GPUS)
        elif key == "region":
            out[key] = st.sampled_from(_REGIONS)
        elif key == "zone":
            out[key] = st.sampled_from(_ZONES)
        elif key in ("date", "as_of"):
            out[key] = _DATES
        elif key == "extra_groups":
            group = st.fixed_dictionaries(
                {"instance": st.sampled_from(["m5.xlarge", "c5.2xlarge", "p5.48xlarge", "nope"])},
                optional={
                    "count": _valid_number("cluster.extra_groups.count"),
                    "spot": st.booleans(),
                    "name": st.text(max_size=5),
                },
            )
            out[key] = st.lists(group, max_size=2)
        elif key in ("name", "savings_plan_family"):
            out[key] = st.sampled_from(["p5", "p4d", "trn1", "x", "run"])
        else:
            out[key] = _literal(section, key)
    return out


_SECTION_NAMES = list(Plan.model_fields)


@st.composite
def _plans(draw: st.DrawFn) -> dict[str, Any]:
    """A plan dict: a runnable core, optional sections with in-range values, then 0-3 careless
    edits (a value from the junk or extreme pools, an unknown key, a section that is no table)."""
    plan: dict[str, Any] = {
        "run": {"hours": draw(_valid_number("run.hours"))},
        "cluster": {
            "instance": draw(st.sampled_from(_INSTANCES)),
            "nodes": draw(st.integers(1, 64)),
        },
    }
    if draw(st.booleans()):
        plan["cluster"] = {"gpu": draw(st.sampled_from(_GPUS)), "gpus": draw(st.integers(1, 512))}
    if draw(st.booleans()):
        del plan["run"]["hours"]
        plan["model"] = {
            "params": draw(st.floats(1e6, 1e12)),
            "tokens": draw(st.floats(1e6, 1e13)),
        }
    for name in draw(st.lists(st.sampled_from(_SECTION_NAMES), max_size=5, unique=True)):
        fields = _section_fields(name)
        keys = draw(st.lists(st.sampled_from(sorted(fields)), max_size=4, unique=True))
        target = plan.setdefault(name, {})
        for key in keys:
            target[key] = draw(fields[key])
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from([*_SECTION_NAMES, "bogus"]))
        kind = draw(st.sampled_from(["value", "value", "value", "key", "section"]))
        if kind == "section":
            plan[name] = draw(_JUNK)
            continue
        target = plan.setdefault(name, {}) if isinstance(plan.get(name, {}), dict) else {}
        fields = _section_fields(name) if name in Plan.model_fields else {"x": _JUNK}
        if kind == "key":
            target[draw(st.sampled_from(["nodez", "hours ", "", "dataset_GB"]))] = 1
        else:
            key = draw(st.sampled_from(sorted(fields)))
            path = f"{name}.{key}"
            target[key] = draw(st.one_of(_EXTREME, _JUNK) if path in PLAN_CAPS else _JUNK)
    return plan


@_profile(400)
@given(plan=_plans())
def test_random_plans_give_a_forecast_or_a_trainbill_error(plan: dict[str, Any]) -> None:
    """plan_from_dict + forecast on any plan dict: a finite bill, or a TrainbillError."""
    try:
        fc = forecast(plan_from_dict(copy.deepcopy(plan)), _CATALOG, today=TODAY)
    except TrainbillError as exc:
        event(f"refused: {type(exc).__name__}")
        assert "\n" not in str(exc)  # noqa: PT017 - one line, whichever error it is
        return
    event("forecast")
    assert math.isfinite(fc.total_usd)
    assert fc.total_usd >= 0 or fc.ledger.by_category().get("discount", 0) < 0


# --- importers ----------------------------------------------------------------------------

_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=8)
)
_JSONISH = st.recursive(
    _LEAF,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
    max_leaves=6,
)


def _or_junk(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly what the format expects; about one time in ten any JSON-like value in its place."""
    return st.tuples(st.integers(0, 9), strategy, _JSONISH).map(
        lambda t: t[2] if t[0] == 9 else t[1]
    )


def _maybe(
    draw: st.DrawFn, out: dict[str, Any], key: str, strategy: st.SearchStrategy[Any]
) -> None:
    if draw(st.booleans()):
        out[key] = draw(_or_junk(strategy))


_COUNT = st.one_of(st.integers(1, 40), st.sampled_from([0, -2, 10**6, 2**63, 1.5, "8", None]))
_SIZE = st.one_of(
    st.floats(0, 1e5), st.sampled_from([0, -1, 1e308, "500", "256GB", float("nan"), float("inf")])
)
_TYPES = st.sampled_from(
    ["p5.48xlarge", "ml.p5.48xlarge", "ml.p4d.24xlarge", "trn1.32xlarge", "g5.48xlarge",
     "ml.m5.xlarge", "c5.2xlarge", "p5.48xlarg", ""]
)  # fmt: skip


@st.composite
def _hyperpod(draw: st.DrawFn) -> Any:
    groups = []
    for i in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from([f"g{i}", f"g{i}", "[/x] head", "\ud800", "[bold]"]))
        g: dict[str, Any] = {"InstanceGroupName": name, "InstanceType": draw(_or_junk(_TYPES))}
        g[
            draw(st.sampled_from(["InstanceCount", "InstanceCount", "TargetCount", "CurrentCount"]))
        ] = draw(_or_junk(_COUNT))
        volume = st.fixed_dictionaries(
            {"EbsVolumeConfig": st.fixed_dictionaries({"VolumeSizeInGB": _or_junk(_SIZE)})}
        )
        _maybe(draw, g, "InstanceStorageConfigs", st.lists(volume, max_size=2))
        _maybe(draw, g, "ThreadsPerCore", st.just(1))
        if draw(st.integers(0, 5)) == 0:
            g["Unknown"] = draw(_JSONISH)
        groups.append(g)
    if draw(st.integers(0, 3)) == 0:
        return groups  # the bare --instance-groups list
    doc: dict[str, Any] = {"InstanceGroups": groups}
    _maybe(
        draw,
        doc,
        "ClusterArn",
        st.sampled_from(["arn:aws:sagemaker:us-west-2:1:cluster/x", "arn:aws:sagemaker::", "x"]),
    )
    _maybe(draw, doc, "Orchestrator", st.just({"Eks": {"ClusterArn": "x"}}))
    return doc


_ACCELERATORS = st.one_of(
    st.sampled_from(
        [
            "H100:8",
            "H100:8",
            "A100:8",
            "A100-80GB:8",
            "H100",
            "H100:x",
            "H100:0",
            "L4:1",
            "Trainium2:16",
            ":8",
            "H100:99999999999",
            "B200:8",
            "TPU-v5p:4",
        ]
    ),
    st.dictionaries(
        st.sampled_from(["H100", "A100", "B200", "nope"]), st.one_of(st.none(), _COUNT), max_size=2
    ),
    st.lists(st.sampled_from(["H100:8", "A100:8"]), max_size=2),
)


@st.composite
def _skypilot(draw: st.DrawFn) -> Any:
    res: dict[str, Any] = {}
    if draw(st.booleans()):
        res["accelerators"] = draw(_or_junk(_ACCELERATORS))
    else:
        res["instance_type"] = draw(_or_junk(_TYPES))
    _maybe(draw, res, "cloud", st.sampled_from(["aws", "aws", "gcp", "azure", "AWS", "oracle"]))
    _maybe(draw, res, "region", st.sampled_from(["us-east-1", "us-central1", "eastus", "mars"]))
    _maybe(draw, res, "infra", st.sampled_from(["aws/us-east-1", "gcp", "aws/*", "/", "k8s/ctx"]))
    _maybe(draw, res, "use_spot", st.booleans())
    _maybe(draw, res, "disk_size", _SIZE)
    if draw(st.integers(0, 4)) == 0:
        res["any_of"] = [dict(res)] if draw(st.booleans()) else draw(_JSONISH)
    doc: dict[str, Any] = {"resources": res}
    _maybe(draw, doc, "num_nodes", _COUNT)
    _maybe(draw, doc, "file_mounts", st.just({"/d": "s3://b"}))
    return doc


_TF_TYPES = st.sampled_from(
    [
        "aws_instance",
        "aws_eks_node_group",
        "aws_autoscaling_group",
        "aws_launch_template",
        "aws_eks_cluster",
        "aws_ebs_volume",
        "aws_fsx_lustre_file_system",
        "aws_nat_gateway",
        "aws_eip",
        "aws_s3_bucket",
    ]
)
_MIXED = {
    "launch_template": [{"override": [{"instance_type": "p5.48xlarge"}],
                         "launch_template_specification": [{"launch_template_name": "lt"}]}],
    "instances_distribution": [{"on_demand_percentage_above_base_capacity": 50}],
}  # fmt: skip


@st.composite
def _tf_values(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """The attributes ``kind`` is read for (usually present), then any others at random."""
    v: dict[str, Any] = {}
    usual = {
        "aws_instance": {"instance_type": _TYPES},
        "aws_launch_template": {"name": st.just("lt"), "instance_type": _TYPES},
        "aws_eks_node_group": {
            "instance_types": st.lists(_TYPES, max_size=2),
            "scaling_config": st.lists(
                st.fixed_dictionaries({"desired_size": _COUNT}), min_size=1, max_size=1
            ),
        },
        "aws_autoscaling_group": {
            "desired_capacity": _COUNT,
            "launch_template": st.just([{"name": "lt"}]),
        },
        "aws_ebs_volume": {"size": _SIZE, "iops": _SIZE, "throughput": _SIZE},
        "aws_fsx_lustre_file_system": {
            "storage_capacity": _SIZE,
            "deployment_type": st.sampled_from(["SCRATCH_2", "PERSISTENT_2", "PERSISTENT_1", "x"]),
            "per_unit_storage_throughput": st.sampled_from([125, 250, 7, "250"]),
        },
    }.get(kind, {})
    for key, strategy in usual.items():
        if draw(st.integers(0, 4)):
            v[key] = draw(_or_junk(strategy))
    if draw(st.integers(0, 3)) == 0:
        _maybe(draw, v, "launch_template", st.just([{"name": "lt"}]))
        _maybe(draw, v, "capacity_type", st.sampled_from(["SPOT", "ON_DEMAND", "spot"]))
        _maybe(draw, v, "instance_market_options", st.just([{"market_type": "spot"}]))
        _maybe(
            draw,
            v,
            "root_block_device",
            st.lists(st.fixed_dictionaries({"volume_size": _SIZE}), max_size=1),
        )
        _maybe(
            draw,
            v,
            "availability_zone",
            st.sampled_from(["us-east-1a", "us-west-2b", "a", "", "1"]),
        )
        _maybe(draw, v, "mixed_instances_policy", st.just([_MIXED]))
    return v


@st.composite
def _terraform(draw: st.DrawFn) -> Any:
    def resources(at_least: int) -> list[Any]:
        out = []
        for i in range(draw(st.integers(at_least, 4))):
            kind = draw(_TF_TYPES if i else st.sampled_from(["aws_instance", "aws_eks_node_group"]))
            r: dict[str, Any] = {
                "type": kind,
                "name": f"r{i}",
                "address": f"{kind}.r{i}" + draw(st.sampled_from(["", "", "[/bold]", "\udc00"])),
                "values": draw(_tf_values(kind)),
            }
            if draw(st.integers(0, 5)) == 0:
                r["mode"] = draw(st.sampled_from(["managed", "data"]))
            out.append(r)
        return out

    root: dict[str, Any] = {"resources": draw(_or_junk(st.just(resources(1))))}
    if draw(st.booleans()):
        root["child_modules"] = draw(_or_junk(st.just([{"resources": resources(0)}])))
    doc: dict[str, Any] = {
        draw(st.sampled_from(["planned_values", "values"])): {"root_module": root}
    }
    region = {
        "provider_config": {"aws": {"expressions": {"region": {"constant_value": "us-west-2"}}}}
    }
    _maybe(draw, doc, "configuration", st.just(region))
    return doc


_DOCUMENTS = st.one_of(
    st.tuples(st.just("hyperpod"), _hyperpod().map(json.dumps)),
    st.tuples(st.just("skypilot"), _skypilot().map(yaml.safe_dump)),
    st.tuples(st.just("terraform"), _terraform().map(json.dumps)),
)
#: Text-level damage: cut short, a NUL byte, a YAML tag PyYAML refuses, an integer literal
#: made 5,000 digits long (past Python's int-from-text limit), a YAML date that does not exist.
_DAMAGE = st.sampled_from(["none"] * 6 + ["truncate", "nul", "tag", "huge-int", "bad-date"])


def _damaged(kind: str, text: str, damage: str, cut: int) -> str:
    if damage == "truncate":
        return text[: cut % (len(text) + 1)]
    if damage == "nul":
        return "\x00" + text
    if damage == "tag":
        return "!!python/object:os.system {}\n" + text if kind == "skypilot" else "[[[" + text
    if damage == "huge-int":
        return (
            re.sub(r"(?<![\w.])[0-9]+(?![\w.])", "9" * 5000, text, count=1)
            if re.search(r"[0-9]", text)
            else text + "9" * 5000
        )
    if damage == "bad-date":
        return (
            text + "\ncreated: 2024-02-30\n"
            if kind == "skypilot"
            else text.replace("{", '{"d": 1e99999, ', 1)
        )
    return text


@_profile(400)
@given(document=_DOCUMENTS, damage=_DAMAGE, cut=st.integers(0, 400))
def test_random_cluster_files_import_or_raise_a_trainbill_error(
    document: tuple[str, str], damage: str, cut: int
) -> None:
    """import_text, then the imported plan through plan_from_dict + forecast: a result or a
    TrainbillError for any HyperPod JSON, SkyPilot YAML or Terraform JSON document."""
    kind, text = document
    text = _damaged(kind, text, damage, cut)
    try:
        report = import_text(kind, text, source="cluster", catalog=_CATALOG)
        event(f"{kind}: imported")
        plan = plan_from_dict({**report.plan, "run": {"hours": 10}}, source="cluster")
        fc = forecast(plan, _CATALOG, today=TODAY)
        event(f"{kind}: forecast")
        # what `trainbill forecast --from` prints: file text is no Rich markup, and all of it prints
        render_import(report, provenance(report, {"run": {"hours": 10}}))
        render_forecast(fc, explain=True)
    except TrainbillError as exc:
        assert "\n" not in str(exc)  # noqa: PT017 - one line, whichever error it is


# --- bills --------------------------------------------------------------------------------

_FOCUS = Path(__file__).resolve().parent / "data" / "bills" / "focus_sample.csv"
with _FOCUS.open(newline="", encoding="utf-8") as _fh:
    _SAMPLE = list(csv.reader(_fh))
_HEADER = _SAMPLE[0]

_AMOUNT = st.integers(-(10**14), 10**14).map(lambda n: Decimal(n).scaleb(-9))  # ±1e5 USD, 9 places
_VARIANTS: dict[str, st.SearchStrategy[str]] = {
    "ServiceCategory": st.sampled_from(
        [
            "Compute",
            "Storage",
            "Networking",
            "Other",
            "",
            "NULL",
            "AI and Machine Learning",
            "Databases",
            "Management and Governance",
        ]
    ),
    "ServiceName": st.sampled_from(
        [
            "Amazon Elastic Compute Cloud",
            "Amazon SageMaker",
            "AmazonCloudWatch",
            "Savings Plans for AWS Compute usage",
            "AWS Support (Business)",
            "Amazon Simple Storage Service",
            "",
            "Mystery",
        ]
    ),
    "ChargeCategory": st.sampled_from(["Usage", "Purchase", "Tax", "Credit", "Adjustment"]),
    "PricingCategory": st.sampled_from(["Standard", "Committed", "Dynamic", "", "Other"]),
    "CommitmentDiscountType": st.sampled_from(["NULL", "Savings Plan", "Reservation", ""]),
    "CommitmentDiscountId": st.sampled_from(["NULL", "sp-1", "ri-2", ""]),
    "SkuId": st.sampled_from(
        ["p5.48xlarge", "ml.p5.48xlarge", "m5.xlarge", "NULL", "BoxUsage:p5.48xlarge"]
    ),
    "ChargeDescription": st.sampled_from(
        [
            "$0.02 per GB data transfer out",
            "NatGateway-Hours",
            "p5.48xlarge On Demand",
            "",
            "support fee",
        ]
    ),
    "ResourceType": st.sampled_from(["instance", "volume", "NULL", "bucket", ""]),
}


def _amount_text(value: Decimal, style: int) -> str:
    if style == 0:
        return format(value, "f")
    if style == 1:
        return format(value.normalize(), "E") if value else "0"
    return format(value, "f").rstrip("0").rstrip(".") or "0"


@st.composite
def _bills(draw: st.DrawFn) -> tuple[list[list[str]], Decimal]:
    """1-8 sample rows with random categories and amounts; the exact BilledCost total by hand."""
    picks = draw(st.lists(st.integers(1, len(_SAMPLE) - 1), min_size=1, max_size=8))
    rows: list[list[str]] = []
    total = Decimal(0)
    for i in picks:
        row = list(_SAMPLE[i])
        for column, strategy in _VARIANTS.items():
            if draw(st.booleans()):
                row[_HEADER.index(column)] = draw(strategy)
        for column in ("BilledCost", "EffectiveCost", "ListCost", "ConsumedQuantity"):
            if draw(st.booleans()):
                value = draw(_AMOUNT) if column != "ConsumedQuantity" else abs(draw(_AMOUNT))
                row[_HEADER.index(column)] = _amount_text(value, draw(st.integers(0, 2)))
            elif column == "BilledCost" and draw(st.integers(0, 9)) == 0:
                row[_HEADER.index(column)] = draw(st.sampled_from(["NULL", ""]))
        billed = row[_HEADER.index("BilledCost")]
        # Text amounts are summed exactly (README, "Money types"); the sample's own amounts
        # have up to 11 decimals (0.00001605990), the drawn ones 9.
        if billed not in ("NULL", ""):
            total += Decimal(billed)
        rows.append(row)
    return rows, total


def _sums_to(values: list[float], total: Decimal) -> bool:
    """Whether the summary's floats add up to ``total``: each is the nearest double to its
    exact decimal, so within 2^-53 of its size; nothing else may be missing."""
    got = sum((Decimal(v) for v in values), Decimal(0))
    slack = sum((abs(Decimal(v)) for v in values), Decimal(0)) * Decimal(2) ** -52
    return abs(got - total) <= slack


@_profile(40)
@given(bill=_bills())
def test_random_bills_never_lose_a_row_or_an_amount(
    bill: tuple[list[list[str]], Decimal], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every row lands in exactly one category; the categories add up to the file's exact
    BilledCost total."""
    pytest.importorskip("duckdb")
    from trainbill.bills import read_bill

    rows, total = bill
    buf = io.StringIO()
    csv.writer(buf).writerows([_HEADER, *rows])
    path = tmp_path_factory.mktemp("bill") / "bill.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    s = read_bill(path)
    assert s.rows == len(rows)
    assert sum(s.rows_by_category.values()) == len(rows)
    assert 0 <= s.uncategorized_rows <= s.rows_by_category["other"]
    # "other" holds the known-but-unmodelled rows and the uncategorised ones.
    assert _sums_to(list(s.by_category.values()), total)
    assert s.billed_cost == float(total)  # the nearest double to the exact total
    if s.uncategorized_rows == s.rows_by_category["other"]:
        assert s.uncategorized_cost == s.by_category["other"]


# --- regressions the properties found -------------------------------------------------------

_FIVE_THOUSAND_NINES = "9" * 5000  # Python converts at most 4,300 digits of text to an int


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (
            "hyperpod",
            f'[{{"InstanceType": "ml.p5.48xlarge", "InstanceCount": {_FIVE_THOUSAND_NINES}}}]',
        ),
        ("terraform", f'{{"planned_values": {_FIVE_THOUSAND_NINES}}}'),
        ("skypilot", f"num_nodes: {_FIVE_THOUSAND_NINES}\nresources: {{accelerators: H100:8}}\n"),
    ],
)
def test_a_5000_digit_number_in_a_cluster_file_is_one_line(kind: str, text: str) -> None:
    """json.loads / yaml.safe_load raised a bare ValueError (int-from-text limit): a traceback."""
    with pytest.raises(
        TrainbillError, match=r"^cluster: invalid (JSON|YAML): a number with more than 4,300 digits"
    ):
        import_text(kind, text, source="cluster", catalog=_CATALOG)


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        (
            "created: 2024-02-30\nresources: {accelerators: H100:8}\n",
            "day is out of range for month",
        ),
        ("num_nodes: !!int x\nresources: {accelerators: H100:8}\n", "invalid literal for int()"),
    ],
)
def test_a_yaml_value_that_cannot_be_built_is_one_line(yaml_text: str, expected: str) -> None:
    """PyYAML parses 2024-02-30 as a date and fails building it with a bare ValueError."""
    with pytest.raises(
        TrainbillError,
        match=rf"^cluster: invalid YAML: a value that cannot be read: {re.escape(expected)}",
    ):
        import_text("skypilot", yaml_text, source="cluster", catalog=_CATALOG)


@pytest.mark.parametrize("accelerators", ["{}", "[{}]"])
def test_empty_accelerator_mapping_is_one_line(accelerators: str) -> None:
    """`accelerators: {}` (or a list holding one) ended in a StopIteration traceback."""
    with pytest.raises(
        TrainbillError, match=r"resources\.accelerators: empty mapping of accelerators"
    ):
        import_text(
            "skypilot",
            f"resources:\n  accelerators: {accelerators}\n",
            source="cluster",
            catalog=_CATALOG,
        )


def test_a_5000_digit_number_in_toml_files_is_one_line(tmp_path: Path) -> None:
    """tomllib raises a bare ValueError past 4,300 digits: plan and calibration readers named
    only TOMLDecodeError, so `trainbill forecast plan.toml` printed a traceback."""
    from trainbill.bills.calibrate import read_calibration as read_bills_calibration
    from trainbill.calibration import read_calibration_file
    from trainbill.profile.calibration import read_calibration as read_profile_calibration
    from trainbill.spec import load_plan

    path = tmp_path / "x.toml"
    path.write_text(f"[run]\nhours = {_FIVE_THOUSAND_NINES}\n", encoding="utf-8")
    for read in (
        load_plan,
        read_calibration_file,
        read_bills_calibration,
        read_profile_calibration,
    ):
        with pytest.raises(TrainbillError, match=r"a number with more than 4,300 digits"):
            read(path)


def test_rich_markup_in_plan_text_prints_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run named "[/x] run" and an extra group "[/bold] head" crashed forecast and simulate
    with Rich's MarkupError (a traceback); they print as typed."""
    from conftest import run_cli

    plan = tmp_path / "p.toml"
    plan.write_text(
        '[run]\nhours = 10\nname = "[/x] run"\n[cluster]\ninstance = "p5.48xlarge"\nnodes = 2\n'
        '[[cluster.extra_groups]]\nname = "[/bold] head"\ninstance = "m5.xlarge"\n',
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "forecast", str(plan), "--explain")
    assert (code, err) == (0, "")
    assert "[/x] run: 2 × p5.48xlarge" in out
    code, out, err = run_cli(capsys, "simulate", str(plan), "--trials", "50")
    assert (code, err) == (0, "")
    assert "[/x] run: 50 simulated runs" in out


def test_markup_in_a_cluster_file_prints_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Terraform address "aws_instance.[/bold]x" crashed `forecast --from` (MarkupError)."""
    from conftest import run_cli

    doc = {
        "planned_values": {
            "root_module": {
                "resources": [
                    {
                        "address": "aws_instance.[/bold]x",
                        "type": "aws_instance",
                        "name": "x",
                        "values": {"instance_type": "p5.48xlarge"},
                    },
                ]
            }
        }
    }
    path = tmp_path / "tf.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = run_cli(capsys, "forecast", "--from", "terraform", str(path), "--hours", "10")
    assert (code, err) == (0, "")
    assert "imported: cluster.instance <- aws_instance.[/bold]x" in out


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (
            "hyperpod",
            (
                '[{"InstanceType": "ml.p5.48xlarge", "InstanceCount": 2}, {"InstanceGroupName": '
                '"\\udc00", "InstanceType": "ml.m5.xlarge", "InstanceCount": 1}]'
            ),
        ),
        (
            "terraform",
            json.dumps(
                {
                    "planned_values": {
                        "root_module": {
                            "resources": [
                                {
                                    "address": "aws_instance.\ud800",
                                    "type": "aws_instance",
                                    "name": "x",
                                    "values": {"instance_type": "p5.48xlarge"},
                                },
                            ]
                        }
                    }
                }
            ),
        ),
    ],
)
def test_an_unpaired_surrogate_escape_is_one_line(kind: str, text: str) -> None:
    """JSON's "\\ud800" decodes to half a UTF-16 pair; printing it raised UnicodeEncodeError."""
    with pytest.raises(
        TrainbillError, match=r"^cluster: '.*\\u(dc|d8)00' is not valid Unicode text"
    ):
        import_text(kind, text, source="cluster", catalog=_CATALOG)


def test_an_unpaired_surrogate_in_a_plan_names_the_field() -> None:
    """A web request body's run.name "\\ud800" is refused on the field, not a 500 on output."""
    with pytest.raises(TrainbillError, match=r"run\.name: '\\ud800' is not valid Unicode text"):
        plan_from_dict(
            {
                "run": {"hours": 1, "name": "\ud800"},
                "cluster": {"instance": "p5.48xlarge", "nodes": 1},
            }
        )
