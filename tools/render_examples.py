"""Regenerate every command output shown in README.md and docs/ from the real CLI.

    python tools/render_examples.py           # rewrite the shown outputs in place
    python tools/render_examples.py --check   # exit 1 naming each output that differs
    python tools/render_examples.py --screenshot   # also redraw docs/report-seed.png (Chromium)

A shown output is a marked block in a Markdown file::

    <!-- output: trainbill forecast examples/seed-70b-finetune.toml; from=Quote (; exit=0 -->
    ```console
    $ trainbill forecast examples/seed-70b-finetune.toml
    …
    ```
    <!-- /output -->

Everything between the two comments is replaced by ``$ COMMAND`` and what the command prints
(stdout, then stderr), run in-process at a fixed width (``docs_reference.COLUMNS``) without
colour or user state, so the text is the same on every machine. Options after ``;``:
``from=TEXT`` shows the output from the first line containing TEXT (a ``…`` line marks the cut),
``exit=N`` the exit status the command must end with (default 0; another status is an error,
so an example cannot silently turn into an error message), ``columns=N`` another width, and
``mask=REGEX`` replaces what the regular expression matches with ``…`` (for the one thing a
command prints that no input fixes: how long it took).
Commands run from the repository root; each distinct command runs once.

Why a script and a test (``tests/docs/test_examples.py``) rather than pasted output: the
README once showed $163,692 while the tool printed $163,698. After a change that moves
numbers, one command brings every page up to date.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_reference import COLUMNS, REPO, run_cli  # after the path above

BLOCK = re.compile(
    r"(?P<open><!-- output: (?P<spec>.+?) -->\n)(?P<body>.*?)(?P<close><!-- /output -->)",
    re.DOTALL,
)
Runner = Callable[[list[str], int], tuple[int, str]]


class ExampleError(Exception):
    """A marked block that cannot be rendered (bad marker, unexpected exit status)."""


def documents(root: Path = REPO) -> list[Path]:
    """The Markdown files that may show command output: the README and every docs page."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _parse(spec: str) -> tuple[list[str], dict[str, str]]:
    command, *options = (part.strip() for part in spec.split(";"))
    argv = shlex.split(command)
    if not argv or argv[0] != "trainbill":
        msg = f"an output block must run trainbill, not {command!r}"
        raise ExampleError(msg)
    opts: dict[str, str] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or key not in ("from", "exit", "columns", "mask"):
            msg = f"unknown option {option!r} in <!-- output: {spec} -->"
            msg += " (allowed: from=, exit=, columns=, mask=)"
            raise ExampleError(msg)
        opts[key] = value
    return argv[1:], opts


def render_block(spec: str, run: Runner, cache: dict[tuple[str, ...], tuple[int, str]]) -> str:
    """The body of one block: a console code block with the command and its output."""
    argv, opts = _parse(spec)
    columns = int(opts.get("columns", COLUMNS))
    key = (str(columns), *argv)
    if key not in cache:
        cache[key] = run(argv, columns)
    code, text = cache[key]
    want = int(opts.get("exit", "0"))
    if code != want:
        msg = f"`trainbill {shlex.join(argv)}` exited {code}, the block says exit={want}:\n{text}"
        raise ExampleError(msg)
    if "mask" in opts:
        text = re.sub(opts["mask"], "…", text)
    if "from" in opts:
        lines = text.splitlines()
        at = next((i for i, line in enumerate(lines) if opts["from"] in line), None)
        if at is None:
            msg = f"`trainbill {shlex.join(argv)}` printed no line containing {opts['from']!r}"
            raise ExampleError(msg)
        text = "…\n" + "\n".join(lines[at:]) + "\n"
    return f"```console\n$ trainbill {shlex.join(argv)}\n{text}```\n"


def render_text(
    text: str, run: Runner, cache: dict[tuple[str, ...], tuple[int, str]] | None = None
) -> str:
    """``text`` with every marked block's body regenerated."""
    memo = {} if cache is None else cache

    def one(m: re.Match[str]) -> str:
        return m["open"] + render_block(m["spec"], run, memo) + m["close"]

    return BLOCK.sub(one, text)


def _run_from_repo(argv: list[str], columns: int) -> tuple[int, str]:
    """``run_cli`` from the repository root, where the examples' relative paths resolve."""
    here = Path.cwd()
    os.chdir(REPO)
    try:
        return run_cli(argv, columns=columns)
    finally:
        os.chdir(here)


def stale(paths: Iterable[Path], run: Runner = _run_from_repo) -> dict[Path, str]:
    """Each file whose shown outputs differ from what the tool prints → a unified diff."""
    cache: dict[tuple[str, ...], tuple[int, str]] = {}
    out: dict[Path, str] = {}
    for path in paths:
        text = path.read_text(encoding="utf-8")
        new = render_text(text, run, cache)
        if new != text:
            out[path] = "".join(
                difflib.unified_diff(
                    text.splitlines(keepends=True),
                    new.splitlines(keepends=True),
                    fromfile=f"{path.name} (shown)",
                    tofile=f"{path.name} (printed)",
                )
            )
    return out


#: The report screenshot the README and the tutorial show, and the plan it is of.
SCREENSHOT = REPO / "docs" / "report-seed.png"
SCREENSHOT_PLAN = "examples/seed-70b-finetune.toml"


def screenshot(target: Path = SCREENSHOT) -> None:
    """Redraw the report screenshot: ``trainbill report`` on the flagship plan, then headless
    Chromium (Debian's ``chromium``) at a fixed window, so the picture is the page as built."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        msg = "--screenshot needs Chromium (apt-get install chromium)"
        raise ExampleError(msg)
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        code, text = _run_from_repo(["report", SCREENSHOT_PLAN, "-o", str(html)], COLUMNS)
        if code != 0:
            raise ExampleError(text)
        png = Path(tmp) / "report.png"
        subprocess.run(  # a fixed browser command on a file just written
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--window-size=1100,1500", f"--screenshot={png}", html.as_uri()],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        tmp_target = target.with_suffix(".png.tmp")
        tmp_target.write_bytes(png.read_bytes())
        tmp_target.replace(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    parser.add_argument("--screenshot", action="store_true", help="redraw docs/report-seed.png")
    parser.add_argument("files", nargs="*", type=Path, help="default: README.md and docs/")
    args = parser.parse_args(argv)
    paths = args.files or documents()
    try:
        found = stale(paths)
    except ExampleError as exc:
        print(f"render_examples: error: {exc}", file=sys.stderr)
        return 1
    if args.check:
        for path, diff in found.items():
            print(f"{path}: shown output differs from what the tool prints\n{diff}")
        return 1 if found else 0
    if args.screenshot:
        try:
            screenshot()
        except (ExampleError, subprocess.SubprocessError, OSError) as exc:
            print(f"render_examples: error: screenshot: {exc}", file=sys.stderr)
            return 1
        print(f"updated {SCREENSHOT.relative_to(REPO)}")
    cache: dict[tuple[str, ...], tuple[int, str]] = {}
    for path in found:
        text = path.read_text(encoding="utf-8")
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(render_text(text, _run_from_repo, cache), encoding="utf-8")
        tmp.replace(path)
        print(f"updated {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
