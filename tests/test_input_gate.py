"""The input gate (``trainbill._io``): every reader takes a regular file of bounded size,
parsed within depth and number caps; one error line naming the file and the limit (issue #44).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from tests.conftest import EXAMPLES, SEED, refused, run_argv

from trainbill import _io
from trainbill.errors import SpecError

SRC = Path(__file__).parent.parent / "src" / "trainbill"


def test_a_fifo_a_device_and_a_loop_are_refused_by_kind(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    cases = {fifo: "FIFO (named pipe)", Path("/dev/zero"): "a device", a: "symbolic link loop",
             tmp_path: "a directory", tmp_path / "nope": "plan file not found"}  # fmt: skip
    for path, said in cases.items():
        with pytest.raises(SpecError, match=re.escape(said)) as err:
            _io.read_input_text(path, kind="plan", what="plan file")
        assert str(err.value).startswith(f"{path}: ")


def test_a_file_over_its_kinds_cap_is_refused_naming_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(_io.INPUT_LIMITS, "plan", 10)
    path = tmp_path / "p.toml"
    path.write_text("x" * 10, encoding="utf-8")
    assert _io.read_input_text(path, kind="plan") == "x" * 10  # exactly the cap: read
    path.write_text("x" * 11, encoding="utf-8")
    with pytest.raises(SpecError, match=r"over the 10 bytes limit for a plan file \(11 bytes\)"):
        _io.read_input_text(path, kind="plan")


@pytest.mark.parametrize("depth", [65, 1_000, 10_000])
def test_nesting_past_the_cap_is_one_error_in_every_format(depth: int) -> None:
    docs = {
        _io.parse_json: "[" * depth + "]" * depth,
        _io.parse_toml: "v = " + "[" * depth + "]" * depth,
        _io.parse_yaml: "[" * depth + "]" * depth,
    }
    for parse, text in docs.items():
        with pytest.raises(SpecError, match=r"doc: nested too deeply \(over 64 levels\)"):
            parse(text, source="doc")


def test_nesting_at_the_cap_is_read() -> None:
    # 63 nested lists inside the top-level table: depths 0 (table) to 63 (innermost list).
    assert _io.parse_toml("v = " + "[" * 63 + "]" * 63, source="doc")["v"] is not None


def test_an_integer_no_float_holds_is_refused_before_arithmetic() -> None:
    with pytest.raises(SpecError, match=r"doc: a\.0: 100000000000… \(401 digits\) is out of range"):
        _io.parse_json('{"a": [1' + "0" * 400 + "]}", source="doc")


def test_a_yaml_key_given_twice_is_refused() -> None:
    text = "num_nodes: 4\nresources:\n  cpus: 8\nnum_nodes: 999\n"
    with pytest.raises(SpecError, match=r"duplicate key 'num_nodes' at line 4 \(first at line 1\)"):
        _io.parse_yaml(text, source="task.yaml")


def test_set_refuses_text_after_the_value_and_huge_numbers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    refused(["diff", str(SEED), "--set", "cluster.nodes=1\n[evil]\nx=1"], capsys,
            "--set", "text after the value")  # fmt: skip
    refused(["diff", str(SEED), "--set", "cluster.nodes=" + "9" * 5000], capsys,
            "--set", "more than 4,300 digits")  # fmt: skip
    refused(["diff", str(SEED), "--set", "cluster.nodes=" + "[" * 5000 + "]" * 5000], capsys,
            "--set", "nested too deeply (over 64 levels)")  # fmt: skip


def test_numeric_flags_and_search_sizes_are_capped(capsys: pytest.CaptureFixture[str]) -> None:
    quote = ["--gpu", "h100", "--cost", "1000", "--params", "7e9", "--tokens", "1e12"]
    refused(["check", "--gpus", "1" + "0" * 400, *quote], capsys,
            "--gpus", "(401 digits) is out of range")  # fmt: skip
    refused(["optimize", str(SEED), "--nodes", "1e308"], capsys,
            "--nodes", "whole numbers from 1 to 100,000")  # fmt: skip
    # The node axis takes 1,024 counts (spec.MAX_NODE_AXIS_VALUES, issue #40's 1,...,512 fits);
    # every other axis 64 (spec.MAX_AXIS_VALUES, the web API's cap).
    many = ",".join(str(n) for n in range(1, 3001))
    refused(["optimize", str(SEED), "--nodes", many], capsys,
            "--nodes", "3,000 values; a search axis takes at most 1,024")  # fmt: skip
    refused(["optimize", str(SEED), "--nodes", "1,...,3000"], capsys,
            "--nodes", "3,000 node counts; a search takes at most 1,024")  # fmt: skip
    kinds = ",".join(["p5.48xlarge"] * 65)
    refused(["optimize", str(SEED), "--instances", kinds], capsys,
            "--instances", "65 values; a search axis takes at most 64")  # fmt: skip


def test_a_step_script_that_exits_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "step.py"
    script.write_text("import sys\nsys.exit(7)\n", encoding="utf-8")
    code, _, err = run_argv(["profile", "--script", str(script)], capsys)
    assert code == 1
    assert "sys.exit(7); a step script must return, not exit" in err
    assert "Traceback" not in err


def test_the_same_bill_under_two_names_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("duckdb")
    bill = Path(__file__).parent / "data" / "bills" / "focus_sample.csv"
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    one.write_bytes(bill.read_bytes())
    two.write_bytes(b"\xef\xbb\xbf" + bill.read_bytes().removeprefix(b"\xef\xbb\xbf"))
    refused(["bill", "summary", str(one), str(two)], capsys, "the same bill as", "counted twice")


def test_a_query_interrupted_by_ctrl_c_is_an_interrupt() -> None:
    from trainbill.__main__ import _interrupted

    assert _interrupted(RuntimeError("Query interrupted"))
    assert not _interrupted(RuntimeError("something else"))


#: How the package may touch a file without the gate, each with why: trainbill's own package
#: data and source (a hash of the code), bills streamed after ``discover`` put them through
#: ``check_input_file``, and the gate itself.
_ALLOWED = {
    "_io.py": "the gate",
    "bills/_files.py": "streams bills that discover() checked (check_input_file / note_input)",
    "bills/_sqlcache.py": "hashes trainbill's own SQL-shaping source files",
    "web/routes.py": "the packaged index.html",
    "report/_html.py": "the packaged report template",
}
_READER = re.compile(
    r"\.read_text\(|\.read_bytes\(|(?<![\w.])open\(|\.open\(|gzip\.open\(|tomllib\.loads?\(|"
    r"yaml\.(safe_)?load\(|json\.load\("
)


def test_no_reader_bypasses_the_gate() -> None:
    """Every file read in the package goes through ``trainbill._io`` (or is listed above)."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in _ALLOWED:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if _READER.search(code) and "os.fdopen" not in code:
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []


def test_examples_still_read(capsys: pytest.CaptureFixture[str]) -> None:
    """The gate refuses only what it should: every example plan is read."""
    for plan in sorted(EXAMPLES.glob("*.toml")):
        if plan.name == "article-claims.toml":
            continue
        code, _, err = run_argv(["forecast", str(plan), "--json"], capsys)
        assert code == 0, (plan, err)


def test_prices_show_refuses_a_region_of_another_cloud(capsys: pytest.CaptureFixture[str]) -> None:
    """us-central1 is GCP's: us-east-1's rates were printed as "aws us-central1"."""
    refused(["prices", "show", "p5.48xlarge", "--region", "us-central1"], capsys,
            "'us-central1' is no aws region", "us-east-1")  # fmt: skip


def test_a_usage_cell_past_the_csv_field_limit_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    usage = tmp_path / "usage.csv"
    usage.write_text("month,gpu_hours\n2026-01," + "1" * 200_000 + "\n", encoding="utf-8")
    line = refused(["commit", str(usage)], capsys, "not a readable CSV file", "field limit")
    assert len(line) < 300  # the cell is not echoed back


def test_a_usage_file_repeating_a_month_is_found_in_linear_time() -> None:
    """Duplicate months are found with a set (a list test was quadratic in the months)."""
    from trainbill.commit import parse_usage_csv

    rows = [f"{2000 + i // 12:04d}-{i % 12 + 1:02d},1" for i in range(6000)]
    text = "month,gpu_hours\n" + "\n".join([*rows, rows[0]]) + "\n"
    with pytest.raises(SpecError, match=r"row 6002, column month: month 2000-01 appears twice"):
        parse_usage_csv(text, source="u.csv")  # 6,000 rows + header = line 6,001; repeat 6,002
