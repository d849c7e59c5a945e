"""The plan schema (``trainbill.spec``): what a plan file, CLI flags or a web body may say.

Sanity caps on every numeric plan field come from one table (``spec.PLAN_CAPS``) used by plan
files, CLI flags and the web API, so ``data.dataset_gb = 1e300`` is a one-line error naming the
field and its allowed range instead of a $2e302 bill (issue #23). Non-finite numbers, counts
below one and plan files that are not UTF-8 are refused the same way, naming the field or byte.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, run_cli, zero_hidden_plan
from trainbill.errors import SpecError
from trainbill.spec import (
    PLAN_CAPS,
    ExtraGroup,
    Plan,
    load_plan,
    merge_plan_dicts,
    plan_from_dict,
    plan_from_toml,
    plan_json_schema,
    plan_to_toml,
)

_BASE: dict[str, Any] = {"run": {"hours": 10}, "cluster": {"instance": "p5.48xlarge", "nodes": 4}}


def _with(path: str, value: Any) -> dict[str, Any]:
    """The base plan with one field (``section.field`` or ``cluster.extra_groups.count``) set."""
    plan = copy.deepcopy(_BASE)
    if path == "cluster.extra_groups.count":
        plan["cluster"]["extra_groups"] = [{"instance": "m5.xlarge", "count": value}]
        return plan
    section, key = path.split(".")
    plan.setdefault(section, {})[key] = value
    if path == "cluster.gpus":  # gpus and nodes together are a separate error
        plan["cluster"] = {"gpu": "h100", "gpus": value}
    return plan


def _numeric_fields() -> set[str]:
    out: set[str] = set()
    for name, spec in Plan.model_fields.items():
        section = spec.section
        assert section is not None
        out |= {
            f"{name}.{k}" for k, f in section.model_fields.items() if f.kind in ("int", "float")
        }
    out |= {
        f"cluster.extra_groups.{k}"
        for k, f in ExtraGroup.model_fields.items()
        if f.kind in ("int", "float")
    }
    return out


def test_every_numeric_field_has_a_cap_from_the_table() -> None:
    """Each int/float field of every section has an ``le`` bound equal to its PLAN_CAPS entry,
    and the table names no field that does not exist (a renamed field would lose its cap)."""
    fields = _numeric_fields()
    assert fields == set(PLAN_CAPS)
    for path in fields:
        *sections, key = path.split(".")
        section = Plan.model_fields[sections[0]].section
        model: Any = ExtraGroup if sections == ["cluster", "extra_groups"] else section
        assert model.model_fields[key].le == PLAN_CAPS[path].high, path
        assert PLAN_CAPS[path].why, path


@pytest.mark.parametrize("path", sorted(PLAN_CAPS))
def test_1e300_is_refused_naming_the_field_and_range(path: str) -> None:
    """1e300 in any numeric field: a SpecError naming the field, its cap and 'allowed:'."""
    with pytest.raises(SpecError) as err:
        plan_from_dict(_with(path, 1e300))
    text = str(err.value)
    shown_path = path.replace("extra_groups.", "extra_groups.0.")
    assert f"{shown_path}: " in text
    assert "allowed: " in text
    assert "\n" not in text


@pytest.mark.parametrize("path", sorted(PLAN_CAPS))
def test_the_cap_itself_is_accepted(path: str) -> None:
    """Caps are inclusive: the bound itself passes the schema (no off-by-one refusal)."""
    cap = PLAN_CAPS[path].high
    value = int(cap) if float(cap).is_integer() and cap < 1e15 else cap
    plan = plan_from_dict(_with(path, value))
    assert plan is not None


def test_dataset_message_reads_as_typed() -> None:
    """The issue's example: dataset_gb = 1e300 names the field, the range 0 to 1e9 GB and why."""
    with pytest.raises(SpecError) as err:
        plan_from_dict(_with("data.dataset_gb", 1e300), source="plan.toml")
    assert str(err.value) == (
        "plan.toml: data.dataset_gb: must be at most 1e+09: too large for any real run, a typo? "
        "(got 1e+300; allowed: 0 to 1e+09 (an exabyte))"
    )


def test_share_fields_state_their_range() -> None:
    """A share above 1 names the range 0 to 1 (no 'typo' wording: it is the field's meaning)."""
    with pytest.raises(
        SpecError, match=r"purchase\.spot_fraction: must be at most 1; allowed: 0 to 1 \(got 1\.5\)"
    ):
        plan_from_dict(_with("purchase.spot_fraction", 1.5))


def test_huge_integer_is_shown_short() -> None:
    """A 301-digit count is echoed cut short with its length, not as 301 digits."""
    with pytest.raises(SpecError) as err:
        plan_from_dict(_with("cluster.nodes", 10**300))
    # the first 12 characters ("1" and eleven zeros), "...", the last 4, the length
    assert "(got 100000000000...0000, 301 characters;" in str(err.value)


@pytest.mark.parametrize("path", sorted(p for p in PLAN_CAPS if p != "cluster.extra_groups.count"))
def test_plan_file_with_1e300_is_one_line_error(
    path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`trainbill forecast plan.toml` with the field at 1e300: exit 1, one stderr line naming it."""
    plan = _with(path, 1e300)
    lines = []
    for section, values in plan.items():
        lines.append(f"[{section}]")
        lines += [
            f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"' for k, v in values.items()
        ]
    f = tmp_path / "plan.toml"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "forecast", str(f))
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1
    assert f"{f}: {path}: " in err
    assert "allowed: " in err


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [
        ("--hours", "1e300", "run.hours"),
        ("--params", "1e300", "model.params"),
        ("--tokens", "1e300", "model.tokens"),
        ("--nodes", str(10**30), "cluster.nodes"),
        ("--spot-fraction", "1e300", "purchase.spot_fraction"),
    ],
)
def test_forecast_flag_at_1e300_is_one_line_error(
    flag: str, value: str, field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flag past its cap goes through the same table: exit 1, one line naming the field."""
    args = [
        "forecast",
        "--instance",
        "p5.48xlarge",
        "--nodes",
        "4",
        "--hours",
        "10",
        "--params",
        "7e9",
        "--tokens",
        "1e11",
    ]
    i = args.index(flag) if flag in args else -1
    if i >= 0:
        args[i + 1] = value
    else:
        args += [flag, value]
    code, _out, err = run_cli(capsys, *args)
    assert code == 1
    assert err.count("\n") == 1
    assert f"command line: {field}: " in err
    assert "allowed: " in err


def test_web_api_refuses_with_422_naming_the_field() -> None:
    """POST /v1/forecast with data.dataset_gb = 1e300: 422, field data.dataset_gb, the range."""
    pytest.importorskip("fastapi")
    httpx = pytest.importorskip("httpx")
    from trainbill.web import create_app

    app = create_app()

    async def go() -> Any:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return await client.post("/v1/forecast", json=_with("data.dataset_gb", 1e300))

    r = asyncio.run(go())
    assert r.status_code == 422
    body = r.json()
    assert body["field"] == "data.dataset_gb"
    assert "allowed: 0 to 1e+09" in body["detail"]


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("run", "hours", "inf", "finite number"),
        ("run", "hours", float("nan"), "finite number"),
        ("run", "hours", 1e308, "must be at most 1,000,000: too large for any real run"),
        ("run", "deadline_hours", float("inf"), "finite number"),
        ("storage", "ebs_gb_per_node", "-inf", "finite number"),
        ("cluster", "nodes", 10**9, "must be at most 100,000"),
        ("cluster", "gpus", 10**29, "must be at most 1,000,000"),
    ],
)
def test_outsized_plan_numbers_name_the_field(
    section: str, key: str, value: Any, expected: str
) -> None:
    plan = zero_hidden_plan()
    if key == "gpus":
        plan["cluster"] = {"gpu": "h100", "gpus": value}
    else:
        plan[section][key] = value
    with pytest.raises(SpecError) as err:
        plan_from_dict(plan)
    assert f"{section}.{key}" in str(err.value)
    assert expected in str(err.value)


def test_model_size_cap_reads_as_a_number() -> None:
    with pytest.raises(SpecError, match=r"model\.params: must be at most 1e\+15: too large"):
        plan_from_dict(
            {
                "model": {"params": 1e308, "tokens": 1e12},
                "cluster": {"instance": "p5.48xlarge", "nodes": 4},
            }
        )


def test_counts_below_one_are_refused() -> None:
    with pytest.raises(
        SpecError, match=r"model\.params: input should be greater than or equal to 1"
    ):
        plan_from_dict(
            {"model": {"params": 1e-300, "tokens": 1e11}, "cluster": {"gpu": "h100", "gpus": 8}}
        )


def test_plan_file_with_bom_reads_and_latin1_is_named(tmp_path: Path) -> None:
    """Windows editors write a UTF-8 byte-order mark (TOML forbids it: 'Invalid statement')."""
    bom = tmp_path / "bom.toml"
    bom.write_bytes(
        b'\xef\xbb\xbf[run]\nhours = 10\n[cluster]\ninstance = "p5.48xlarge"\nnodes = 2\n'
    )
    assert load_plan(bom).cluster.nodes == 2
    latin = tmp_path / "latin.toml"
    latin.write_bytes(
        b'[run]\nname = "caf\xe9"\n'
    )  # é (Latin-1 0xE9) after len('[run]\n') 6 + len('name = "caf') 11 = byte 17
    with pytest.raises(SpecError, match=r"not UTF-8 text \(byte 17: b'\\xe9'\)"):
        load_plan(latin)


def test_unknown_key_is_named_with_a_suggestion_and_the_allowed_keys() -> None:
    """A typo must not silently become a default: ``hourz`` is refused, ``hours`` suggested."""
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "run": {"hourz": 10}})
    assert err.value.field == "run.hourz"
    assert "unknown key. Did you mean 'hours'?" in str(err.value)
    assert "Allowed: name, hours, deadline_hours, date" in str(err.value)


def test_unknown_section_lists_the_sections() -> None:
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "sizes": {}})
    assert err.value.field == "sizes"
    assert (
        "Allowed: run, model, cluster, purchase, prices, storage, data, checkpoint, evaluation, "
        "network, monitoring, reliability"
    ) in str(err.value)


@pytest.mark.parametrize(
    ("plan", "needle"),
    [
        ({"run": {"hours": 10}, "cluster": {"nodes": 4}}, "cluster needs an instance"),
        ({"run": {"hours": 10}, "cluster": {"instance": "p5.48xlarge"}}, "cluster needs nodes"),
        (
            {"cluster": {"instance": "p5.48xlarge", "nodes": 4}},
            "give run.hours, or model.params and model.tokens",
        ),
    ],
)
def test_a_plan_must_say_enough_to_be_priced(plan: dict[str, Any], needle: str) -> None:
    with pytest.raises(SpecError, match=needle):
        plan_from_dict(plan)


def test_hours_may_come_from_params_and_tokens_instead() -> None:
    plan = plan_from_dict(
        {"model": {"params": 7e9, "tokens": 1e11}, "cluster": {"gpu": "h100", "gpus": 8}}
    )
    assert plan.run.hours is None
    assert plan.model.params == 7e9


def test_a_boolean_is_not_a_count() -> None:
    """Lax parsing read ``nodes = true`` as one node."""
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "cluster": {"instance": "p5.48xlarge", "nodes": True}})
    assert err.value.field == "cluster.nodes"
    assert "not the boolean true" in str(err.value)


def test_active_params_cannot_exceed_params() -> None:
    with pytest.raises(
        SpecError, match=r"active_params \(8e\+09\) cannot exceed params \(7e\+09\)"
    ):
        plan_from_dict({**_BASE, "model": {"params": 7e9, "active_params": 8e9}})


def test_an_aws_orchestrator_on_another_cloud_names_that_clouds_choices() -> None:
    cluster = {"provider": "gcp", "instance": "a3-highgpu-8g", "nodes": 4}
    with pytest.raises(SpecError) as err:
        plan_from_dict({"run": {"hours": 10}, "cluster": {**cluster, "orchestrator": "hyperpod"}})
    assert err.value.field == "cluster.orchestrator"
    assert "'hyperpod' is an AWS service, not offered on gcp" in str(err.value)


def test_plans_are_frozen() -> None:
    plan = plan_from_dict(_BASE)
    with pytest.raises(ValueError, match="frozen"):
        plan.run.hours = 20  # type: ignore[misc]


def test_merge_lets_the_override_win_key_by_key_and_leaves_the_base_alone() -> None:
    """Flags over a file: the override's keys replace the base's, the others stay."""
    merged = merge_plan_dicts(_BASE, {"cluster": {"nodes": 8}, "purchase": {"spot_fraction": 0.5}})
    assert merged == {
        "run": {"hours": 10},
        "cluster": {"instance": "p5.48xlarge", "nodes": 8},
        "purchase": {"spot_fraction": 0.5},
    }
    assert _BASE["cluster"]["nodes"] == 4


#: The example plans (``article-claims.toml`` is a claims file for ``trainbill check``, not a plan).
PLAN_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.toml") if p.name != "article-claims.toml")


@pytest.mark.parametrize("example", PLAN_EXAMPLES, ids=lambda p: p.name)
def test_every_example_survives_a_round_trip_through_toml(example: Path) -> None:
    plan = load_plan(example)
    assert plan_from_toml(plan_to_toml(plan, header="round trip")) == plan


def test_a_name_with_quotes_and_newlines_stays_one_toml_string() -> None:
    name = 'x"\n[cluster]\nnodes = 999'
    plan = plan_from_dict({**_BASE, "run": {"hours": 10, "name": name}})
    back = plan_from_toml(plan_to_toml(plan))
    assert back.run.name == name
    assert back.cluster.nodes == 4


def test_malformed_toml_names_line_and_column() -> None:
    # line 2 is "hours = ", the value is missing at column 9 (1-based, after "hours = ")
    with pytest.raises(SpecError, match=r"invalid TOML: .*\(at line 2, column 9\)"):
        plan_from_toml("[run]\nhours = \n")


def test_a_missing_plan_file_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(SpecError) as err:
        load_plan(missing)
    assert str(err.value) == f"{missing}: plan file not found"


@pytest.mark.parametrize(
    ("section", "fields", "field", "said"),
    [
        ("run", {"hours": 10, "date": 0}, "run.date", "expected a date like 2026-01-15"),
        ("prices", {"as_of": 1.7e9}, "prices.as_of", "expected a date like 2026-01-15"),
        ("network", {"s3_via_nat": "yes"}, "network.s3_via_nat", "expected true or false"),
        ("checkpoint", {"asynchronous": 1}, "checkpoint.asynchronous", "expected true or false"),
    ],
)
def test_a_number_is_no_date_and_a_word_no_switch(
    section: str, fields: dict[str, object], field: str, said: str
) -> None:
    """Lax validation read run.date = 0 as 1970-01-01 (seconds since the epoch) and "yes" or 1
    as true: each is refused naming the field; real dates and booleans still read."""
    base: dict[str, object] = {
        "run": {"hours": 10},
        "cluster": {"instance": "p5.48xlarge", "nodes": 2},
    }
    with pytest.raises(SpecError, match=f"{field}: {said}"):
        plan_from_dict({**base, section: fields})
    ok = plan_from_dict(
        {**base, "network": {"s3_via_nat": True}, "prices": {"as_of": "2026-01-01"}}
    )
    assert ok.network.s3_via_nat is True


def test_the_json_schema_states_every_cap_and_section() -> None:
    """GET /v1/schema/plan's document comes from the field table that validates a plan: each
    section is a closed object, each numeric field carries its PLAN_CAPS bound as ``maximum``,
    and an extra group requires its instance."""
    schema = plan_json_schema()
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(Plan.model_fields)
    defs = schema["$defs"]
    for path, cap in PLAN_CAPS.items():
        *sections, key = path.split(".")
        name = "ExtraGroup" if sections == ["cluster", "extra_groups"] else None
        if name is None:
            ref = schema["properties"][sections[0]]["$ref"]
            name = ref.rsplit("/", 1)[1]
        prop = defs[name]["properties"][key]
        kinds = prop.get("anyOf", [prop])
        assert kinds[0]["maximum"] == cap.high, path
        assert defs[name]["additionalProperties"] is False
    assert defs["ExtraGroup"]["required"] == ["instance"]
    # The run's hours: above 0 (exclusive), may be left null (derived from params and tokens).
    hours = defs["RunSection"]["properties"]["hours"]
    assert hours["anyOf"][0]["exclusiveMinimum"] == 0
    assert hours["anyOf"][1] == {"type": "null"}
    assert defs["ClusterSection"]["properties"]["provider"]["enum"] == ["aws", "gcp", "azure"]


def test_numbers_written_as_text_read_as_python_reads_them() -> None:
    """A JSON body's "10" or "1_000" is the number; "１２" (full-width digits), "0x10" and "10%"
    are not numbers and are refused naming the field."""
    plan = plan_from_dict(
        {"run": {"hours": "1e1"}, "cluster": {"instance": "p5.48xlarge", "nodes": "1_000"}}
    )
    assert (plan.run.hours, plan.cluster.nodes) == (10.0, 1000)
    for text in ("１２", "0x10", "10%", ""):
        with pytest.raises(SpecError) as err:
            plan_from_dict({**_BASE, "run": {"hours": text}})
        assert err.value.field == "run.hours"
        assert "unable to parse string as a number" in str(err.value)


def test_a_section_says_how_to_derive_a_variant_when_assigned() -> None:
    plan = plan_from_dict(_BASE)
    with pytest.raises(ValueError, match=r"RunSection\.hours is frozen: derive a variant"):
        plan.run.hours = 20  # type: ignore[misc]
    changed = plan.model_copy(update={"run": plan.run.model_copy(update={"hours": 20.0})})
    assert (changed.run.hours, plan.run.hours) == (20.0, 10.0)
    assert changed != plan
    assert hash(plan_from_dict(_BASE)) == hash(plan)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("2026-13-01", "a valid date in the format YYYY-MM-DD (month must be in 1..12)"),
        ("next week", "a valid date in the format YYYY-MM-DD (got 'next week')"),
        ("2026-01-01T10:00:00", "should have zero time - e.g. be exact dates (got '2026-01-01T10"),
    ],
)
def test_a_date_that_is_no_day_says_why(value: str, said: str) -> None:
    """Month 13 names the month; a time of day on a date field is refused as typed; midnight and
    a plain date read as the day."""
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "prices": {"as_of": value}})
    assert err.value.field == "prices.as_of"
    assert said in str(err.value)
    for ok in ("2026-01-01", "2026-01-01T00:00:00"):
        assert str(plan_from_dict({**_BASE, "prices": {"as_of": ok}}).prices.as_of) == "2026-01-01"


def test_an_extra_groups_unknown_key_lists_the_groups_keys() -> None:
    """An extra group's typo lists an extra group's keys (it listed the cluster's)."""
    groups = [{"instance": "m5.xlarge", "colour": "red"}]
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "cluster": {**_BASE["cluster"], "extra_groups": groups}})
    assert err.value.field == "cluster.extra_groups.0.colour"
    assert "Allowed: name, instance, count, spot" in str(err.value)


def test_a_count_written_with_thousands_of_digits_is_one_line_not_a_crash() -> None:
    """Python converts at most 4,300 digits of text to an integer: a longer count is refused
    naming the field (it was a ValueError traceback, and a 500 from the web API)."""
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "cluster": {"instance": "p5.48xlarge", "nodes": "1" * 4400}})
    assert err.value.field == "cluster.nodes"
    assert "exceeded maximum size" in str(err.value)
    assert "\n" not in str(err.value)


def test_counts_written_as_whole_numbers_in_text_read_as_counts() -> None:
    """ "10.0" is 10 nodes as 10.0 is; "10.5" is no count."""
    plan = plan_from_dict({**_BASE, "cluster": {"instance": "p5.48xlarge", "nodes": "10.0"}})
    assert plan.cluster.nodes == 10
    with pytest.raises(SpecError, match=r"cluster\.nodes: input should be a valid integer"):
        plan_from_dict({**_BASE, "cluster": {"instance": "p5.48xlarge", "nodes": "10.5"}})


def test_numbers_of_any_numeric_type_are_numbers() -> None:
    """NumPy scalars, Decimal and Fraction (a notebook's values) are numbers, as before; NumPy's
    boolean is no count, but is a switch."""
    from decimal import Decimal
    from fractions import Fraction

    import numpy as np

    plan = plan_from_dict(
        {
            "run": {"hours": np.float32(10), "deadline_hours": Decimal("20.5")},
            "cluster": {"instance": "p5.48xlarge", "nodes": np.int64(8)},
            "purchase": {"spot_fraction": Fraction(1, 4)},
            "checkpoint": {"asynchronous": np.bool_(True)},
        }
    )
    assert (plan.run.hours, plan.run.deadline_hours, plan.cluster.nodes) == (10.0, 20.5, 8)
    assert (plan.purchase.spot_fraction, plan.checkpoint.asynchronous) == (0.25, True)
    with pytest.raises(SpecError, match="not the boolean true"):
        plan_from_dict({**_BASE, "cluster": {"instance": "p5.48xlarge", "nodes": np.bool_(True)}})


def test_a_key_that_would_break_the_line_is_shown_escaped() -> None:
    """An unknown key with a newline, a terminal escape or half a UTF-16 pair is named in its
    escaped form: one line, and JSON can carry it (the web API answered 500)."""
    for key in ("a\nb\x1b[31mRED", "\ud800"):
        with pytest.raises(SpecError) as err:
            plan_from_dict({**_BASE, "run": {"hours": 10, key: 1}})
        assert err.value.field == f"run.{key!a}"
        assert "\n" not in str(err.value)
        assert "\x1b" not in str(err.value)
        str(err.value).encode("utf-8")  # no lone surrogate left in the message


def test_an_extra_group_needs_an_instance_name() -> None:
    """instance = "" was accepted and billed the group as another GPU node."""
    groups = [{"instance": "", "count": 1}]
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "cluster": {**_BASE["cluster"], "extra_groups": groups}})
    assert err.value.field == "cluster.extra_groups.0.instance"
    assert "at least 1 character" in str(err.value)


def test_a_section_built_in_code_is_validated_and_filled_in() -> None:
    """Building a section directly validates like a plan file: the cluster's orchestrator is
    the provider's own VMs, a negative hour count is refused naming the field."""
    from trainbill.spec import ClusterSection, RunSection

    assert ClusterSection(provider="gcp").orchestrator == "vm"
    with pytest.raises(SpecError) as err:
        RunSection(hours=-5)
    assert err.value.field == "hours"
    assert "greater than 0" in str(err.value)


def test_a_plan_subclass_keeps_the_plans_fields() -> None:
    class Tagged(Plan):
        pass

    assert list(Tagged.model_fields) == list(Plan.model_fields)
    assert Tagged.model_validate(_BASE).run.hours == 10.0


def test_an_empty_what_if_is_no_what_if() -> None:
    from trainbill.spec import WhatIf

    plan = plan_from_dict(_BASE)
    assert plan.with_whatif(WhatIf()) == plan
    assert plan.with_whatif(WhatIf(flops_saving=0.1)) != plan


@pytest.mark.parametrize("value", ["20260115", "2026-W03-1", "2026-015"])
def test_only_iso_extended_dates_are_days(value: str) -> None:
    """Python's fromisoformat reads "20260115" and week dates; a plan's date is written as
    2026-01-15 (or midnight of it), as the JSON Schema's format says."""
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "prices": {"as_of": value}})
    assert err.value.field == "prices.as_of"
    assert plan_json_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_counts_in_a_plan_file_take_the_command_lines_suffixes() -> None:
    """Was: ``params = "70B"`` in a plan was refused though ``--params 70B`` works. The counts
    (parameters, tokens, batch tokens) take K, M, B, T: 70B = 7e10, "1.4T" = 1.4e12, "4m" =
    4e6; other fields do not (an "m" could be minutes or MB), and a bad suffix is still refused."""
    plan = plan_from_dict({
        "model": {"params": "70B", "active_params": "13b", "tokens": "1.4T",
                  "global_batch_tokens": "4m"},
        "cluster": {"instance": "p5.48xlarge", "nodes": 2},
    })  # fmt: skip
    m = plan.model
    assert (m.params, m.active_params, m.tokens, m.global_batch_tokens) == (70e9, 13e9, 1.4e12, 4e6)
    with pytest.raises(SpecError, match=r"model\.params"):
        plan_from_dict({"model": {"params": "70X"}, "cluster": {"gpu": "h100", "gpus": 8}})
    with pytest.raises(SpecError, match=r"run\.hours"):
        plan_from_dict({"run": {"hours": "10k"}, "cluster": {"gpu": "h100", "gpus": 8}})
