"""``trainbill diff``: two plans' forecasts side by side, as a table, JSON or a PR comment.

``diff BASE NEW`` compares two plan files; ``diff PLAN --set cluster.nodes=64`` compares a plan
with itself changed (a quick what-if). ``--fail-above-usd`` / ``--fail-above-percent`` make
the exit status 3 when the real bill grows by more, so CI can gate a plan change on its cost.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer

from trainbill._io import parse_toml
from trainbill.cli import _common, app
from trainbill.cli._common import catalog_from_options, finite_option, print_json
from trainbill.errors import SpecError, shown_value

__all__ = ["EXIT_OVER_THRESHOLD", "markdown"]

#: Exit status when the bill grows past a --fail-above-* threshold (1 is bad input).
EXIT_OVER_THRESHOLD = 3


#: A ``--set`` value taken as text without quotes (``--set cluster.orchestrator=eks``).
_BARE_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/+-]*")


def _set_value(text: str) -> tuple[str, str, Any]:
    """``section.key=value`` with the value read as TOML (``64``, ``0.5``, ``"eks"``, ``true``);
    a bare word that is not TOML is taken as text (``--set cluster.orchestrator=eks``)."""
    key, sep, raw = text.partition("=")
    section, dot, field = key.strip().partition(".")
    if not sep or not dot or not section or not field or "." in field:
        msg = f"{text!r} is not section.key=value (e.g. cluster.nodes=64)"
        raise SpecError(msg, source="command line", field="--set")
    value = raw.strip()

    def error(message: str, source: str) -> SpecError:
        return SpecError(f"{message} (in {shown_value(text, 60)})", source=source, field="--set")

    # One TOML value and nothing after it: "1\n[evil]\nx=1" parsed as 1 and a table before.
    try:
        doc = parse_toml(f"v = {value}", source="command line", error=error)
    except SpecError:
        if _BARE_WORD.fullmatch(value) and not value.lstrip("+-").isdigit():
            return section, field, value  # not TOML: a bare word taken as text
        raise
    if set(doc) != {"v"}:
        msg = f"{shown_value(text, 60)}: text after the value; give one value per --set"
        raise SpecError(msg, source="command line", field="--set")
    return section, field, doc["v"]


def _plan(path: Path, sets: list[str]) -> tuple[Any, str]:
    """The plan file with each ``--set section.key=value`` applied, and its name for errors."""
    from trainbill.cli._plan_flags import build_plan

    flags: dict[str, dict[str, Any]] = {}
    for s in sets:
        section, field, value = _set_value(s)
        flags.setdefault(section, {})[field] = value
    plan = build_plan(path, flags=flags)
    return plan, str(path) + "".join(f" --set {s}" for s in sets)


def _usd(x: float | None, *, sign: bool = False) -> str:
    if x is None:
        return "-"
    s = f"${abs(x):,.2f}"
    if x < 0:
        return "-" + s
    return ("+" + s) if sign and x > 0 else s


def _pct(p: float | None) -> str:
    return "-" if p is None else f"{p:+.1f}%"


def _figure(x: float | None, unit: str, *, sign: bool = False) -> str:
    if unit == "USD":
        return _usd(x, sign=sign)
    if x is None:
        return "-"
    return f"{x:+,.1f}" if sign else f"{x:,.1f}"


def _value(v: Any) -> str:
    """An input as the plan file would say it; unset is the catalog's default."""
    if v is None:
        return "(default)"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int | float):
        from trainbill.report.format import number

        # 2000.0 reads "2,000", as the ledger prints quantities (issue #42).
        return number(float(v), 4)
    return str(v)


def _header(d: Any) -> list[str]:
    same = d.base_as_of == d.new_as_of
    prices = (
        f"prices as of {d.base_as_of}"
        if same
        else f"prices as of {d.base_as_of} (base) and {d.new_as_of} (new)"
    )
    return [
        f"base: {d.base_name}",
        f"new:  {d.new_name}",
        f"{d.currency}, {prices}",
        *(f"NOTE: {n}" for n in d.notes),
    ]


def markdown(d: Any) -> str:
    from trainbill.report.format import category_name, money_precise

    """A pull-request comment: the totals first, categories, lines and inputs in <details>."""
    out = ["### trainbill cost diff", ""]
    out.append(f"**base** `{d.base_name}` → **new** `{d.new_name}`  ")
    same = d.base_as_of == d.new_as_of
    out.append(
        f"{d.currency}; prices as of {d.base_as_of}"
        if same
        else f"{d.currency}; **different price dates**: base {d.base_as_of}, new {d.new_as_of}"
    )
    for n in d.notes:
        out.append(f"> **Note:** {n}")
    out += ["", "| | base | new | delta | % |", "|---|---:|---:|---:|---:|"]
    for h in d.headlines:
        out.append(
            f"| {'**' + h.name + '**' if h is d.total else h.name} | {_figure(h.base, h.unit)} | "
            f"{_figure(h.new, h.unit)} | {_figure(h.delta, h.unit, sign=True)} | "
            f"{_pct(h.percent)} |"
        )
    out += ["", "<details><summary>By category</summary>", "",
            "| category | base | new | delta | % |", "|---|---:|---:|---:|---:|"]  # fmt: skip
    for c in d.categories:
        out.append(
            f"| {category_name(c.category)} | {_usd(c.base_usd)} | {_usd(c.new_usd)} | "
            f"{_usd(c.delta_usd, sign=True)} | {_pct(c.percent)} |"
        )
    out += [
        "",
        "</details>",
        "",
        "<details><summary>By line (quantity × unit price = cost; why it moved)</summary>",
        "",
        "| category | item | base | new | delta | % | why |",
        "|---|---|---:|---:|---:|---:|---|",
    ]

    def side(ln: Any) -> str:
        if ln is None:
            return "-"
        return (
            f"{ln.quantity:,.2f} {ln.unit} × {money_precise(ln.unit_price_usd)} = "
            f"{_usd(ln.cost_usd)}"
        )

    for ld in d.lines:
        out.append(
            f"| {category_name(ld.category)} | {ld.item} | {side(ld.base)} | {side(ld.new)} | "
            f"{_usd(ld.delta_usd, sign=True)} | {_pct(ld.percent)} | {ld.why.replace('|', '/')} |"
        )
    out += ["", "</details>", "", "<details><summary>Inputs that differ</summary>", "",
            "| input | base | new |", "|---|---|---|"]  # fmt: skip
    for i in d.inputs:
        out.append(f"| `{i.key}` | {_value(i.base)} | {_value(i.new)} |")
    if not d.inputs:
        out.append("| (none) | | |")
    out += ["", "</details>", ""]
    return "\n".join(out)


def _render(d: Any, *, wide: bool) -> None:
    console = _common.console  # looked up per call: COLUMNS may change between runs (tests)
    from trainbill.cli._tables import Col, align_money, print_table
    from trainbill.report.format import category_name, money_precise

    for line in _header(d):
        console.print(line, style="yellow" if line.startswith("NOTE") else None, markup=False)
    rows = [
        [
            h.name,
            _figure(h.base, h.unit),
            _figure(h.new, h.unit),
            _figure(h.delta, h.unit, sign=True),
            _pct(h.percent),
        ]
        for h in d.headlines
    ]
    cols = [
        Col("figure"),
        Col("base", "right"),
        Col("new", "right"),
        Col("delta", "right"),
        Col("%", "right", drop=1),
    ]
    print_table(console, "Headline", cols, rows, wide=wide)
    rows = [
        [
            category_name(c.category),  # "GPUs waiting on gradient sync …", not sync_stall
            _usd(c.base_usd),
            _usd(c.new_usd),
            _usd(c.delta_usd, sign=True),
            _pct(c.percent),
        ]
        for c in d.categories
    ]
    print_table(console, "By category", [Col("category"), *cols[1:]], rows, wide=wide)
    cols = [
        Col("category", drop=5),
        Col("item", kind="text"),
        Col("base qty", "right", drop=4),
        Col("new qty", "right", drop=3),
        Col("unit", drop=6),
        Col("base $/unit", drop=7),  # decimal points aligned (align_money)
        Col("new $/unit", drop=8),
        Col("base", "right"),
        Col("new", "right"),
        Col("delta", "right"),
        Col("%", "right", drop=2),
        Col("moved", kind="text", drop=1),
    ]

    def q(ln: Any) -> str:
        return "-" if ln is None else f"{ln.quantity:,.2f}"

    def p(ln: Any) -> str:
        return "-" if ln is None else money_precise(ln.unit_price_usd)

    rows = [
        [
            category_name(ld.category),
            ld.item,
            q(ld.base),
            q(ld.new),
            (ld.new or ld.base).unit,
            p(ld.base),
            p(ld.new),
            _usd(ld.base_usd),
            _usd(ld.new_usd),
            _usd(ld.delta_usd, sign=True),
            _pct(ld.percent),
            ld.moved,
        ]
        for ld in d.lines
    ]
    for col in (5, 6):
        for r, cell in zip(rows, align_money([r[col] for r in rows]), strict=True):
            r[col] = cell
    print_table(console, "By line", cols, rows, wide=wide)
    rows = [[i.key, _value(i.base), _value(i.new)] for i in d.inputs]
    if rows:
        print_table(
            console,
            "Inputs that differ",
            [Col("input"), Col("base", kind="text"), Col("new", kind="text")],
            rows,
            wide=wide,
        )


@app.command("diff")
def diff_cmd(
    base: Annotated[Path, typer.Argument(help="Base plan TOML.")],
    new: Annotated[
        Path | None, typer.Argument(help="New plan TOML (or give --set to change BASE).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="section.key=value applied to the new side, e.g. cluster.nodes=64 (repeatable).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the diff as JSON.")] = False,
    as_markdown: Annotated[
        bool, typer.Option("--markdown", help="Print a pull-request comment (Markdown).")
    ] = False,
    fail_above_usd: Annotated[
        float | None,
        typer.Option(
            "--fail-above-usd", help="Exit 3 when the real bill grows by more than this many USD."
        ),
    ] = None,
    fail_above_percent: Annotated[
        float | None,
        typer.Option(
            "--fail-above-percent",
            help="Exit 3 when the real bill grows by more than this percentage.",
        ),
    ] = None,
    catalog_dir: Annotated[
        list[Path] | None, typer.Option("--catalog", help="Overlay catalog directory (own rates).")
    ] = None,
    wide: Annotated[
        bool, typer.Option("--wide", help="Show every column, whatever the terminal width.")
    ] = False,
) -> None:
    """Two forecasts side by side: headline, category and line deltas, and the inputs that moved them."""  # noqa: E501 - Typer lists the first line as written
    from trainbill.usecases.compare import diff_plans

    if as_json and as_markdown:
        raise SpecError("choose one of --json and --markdown", source="command line")
    if new is None and not set_:
        raise SpecError(
            "give a NEW plan file or --set section.key=value to change BASE", source="command line"
        )
    finite_option(fail_above_usd, "--fail-above-usd", positive=False)
    finite_option(fail_above_percent, "--fail-above-percent", positive=False)
    catalog = catalog_from_options(catalog_dir)
    base_plan, base_name = _plan(base, [])
    new_plan, new_name = _plan(new or base, set_ or [])
    d = diff_plans(base_plan, new_plan, catalog, base_name=base_name, new_name=new_name)
    if as_json:
        print_json(d.as_dict())
    elif as_markdown:
        typer.echo(markdown(d), nl=False)
    else:
        _render(d, wide=wide)
    over = []
    delta, pct = d.total.delta or 0.0, d.total.percent
    if fail_above_usd is not None and delta > fail_above_usd:
        over.append(
            f"the real bill grows by {_usd(delta)}, above --fail-above-usd {_usd(fail_above_usd)}"
        )
    if fail_above_percent is not None and pct is not None and pct > fail_above_percent:
        over.append(
            f"the real bill grows by {pct:.1f}%, above --fail-above-percent {fail_above_percent:g}%"
        )
    if over:
        typer.echo("trainbill: " + "; ".join(over), err=True)
        raise typer.Exit(EXIT_OVER_THRESHOLD)
