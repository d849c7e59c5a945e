"""``trainbill report`` and ``trainbill serve`` on the command line: outputs never replace the
plan or an existing file without --force, and bad hosts, ports and seeds are one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SEED, refused, run_argv


def test_report_never_replaces_its_plan(
    plan_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o PLAN --force wrote HTML over the plan file."""
    before = plan_copy.read_bytes()
    refused(["report", str(plan_copy), "-o", str(plan_copy), "--force", "--trials", "0"], capsys,
             "--output", "input file")  # fmt: skip
    assert plan_copy.read_bytes() == before


def test_report_output_below_a_file(plan_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was a FileExistsError traceback from mkdir."""
    refused(["report", str(plan_copy), "-o", str(plan_copy / "r.html"), "--trials", "0"], capsys,
             "--output", "is a file, not a folder")  # fmt: skip


def test_report_negative_seed_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A negative --seed is one error naming the flag, and no report is written."""
    out = tmp_path / "r.html"
    refused(["report", str(SEED), "-o", str(out), "--seed", "-1"], capsys, "--seed")
    assert not out.exists()


def test_report_existing_file_kept_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report -o keeps an existing file without --force, and --force never replaces a directory."""
    out = tmp_path / "r.html"
    out.write_text("mine")
    refused(
        ["report", str(SEED), "-o", str(out), "--trials", "0"], capsys, "already exists", "--force"
    )
    assert out.read_text() == "mine"
    refused(
        ["report", str(SEED), "-o", str(tmp_path), "--force", "--trials", "0"],
        capsys,
        "is a directory",
    )


def test_serve_refuses_a_busy_port_before_announcing(capsys: pytest.CaptureFixture[str]) -> None:
    """uvicorn logged the bind error after "serving on …" had been printed."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, out, err = run_argv(["serve", "--port", str(port)], capsys)
    assert code == 1
    assert "serving on" not in out
    assert f"--port: cannot listen on 127.0.0.1:{port}" in err


def test_serve_names_an_unresolvable_host(capsys: pytest.CaptureFixture[str]) -> None:
    """serve --host with a name that does not resolve is one error naming the flag."""
    code, out, err = run_argv(["serve", "--host", "not a host", "--port", "8000"], capsys)
    assert code == 1
    assert "serving on" not in out
    assert "--host: cannot resolve 'not a host'" in err


def test_report_to_a_dash_is_refused_not_a_file_named_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: ``report -o -`` wrote a file called "-" in the working folder."""
    monkeypatch.chdir(tmp_path)
    refused(["report", str(SEED), "-o", "-"], capsys, "--output", "standard output")
    assert not (tmp_path / "-").exists()
