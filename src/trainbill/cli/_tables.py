"""Tables that never cut an identifier or an amount: at narrow widths they drop columns and say so.

Rich fits a table to the terminal by shrinking columns, and a shrunk cell is cut with "…":
"p5.48xla…", "$1,094,0…". An instance name or a dollar figure read that way is wrong, not
abbreviated. So every column here has a kind:

* ``keep`` (identifiers, money): never wrapped or shrunk; the column is as wide as its widest cell.
* ``text``: may wrap (fold) down to ``_MIN_TEXT`` characters.

When even that does not fit the console (``COLUMNS`` or the terminal), columns are dropped in
the order of their ``drop`` rank (highest first; 0 = never), columns of one rank together (a
quantity and its unit go as a pair: "93.75" without "1000 requests" reads wrong), and a line
under the table names them and says ``--wide`` shows everything. ``--wide`` prints every
column at its natural width, whatever the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["Col", "align_money", "money", "new_table", "print_table", "print_wrapped"]

#: Narrowest a wrapping text column gets before columns are dropped instead.
_MIN_TEXT = 12
#: Longest lead-in ("warning:", "caveat:") the wrapped text is hung under; longer ones indent 2.
_HANG = 10
#: Per column: one space of padding each side and one border line; plus the table's last border.
_PER_COLUMN = 3


@dataclass(frozen=True, slots=True)
class Col:
    """A column: its header, alignment, kind (``keep`` never wraps) and drop rank (0 = never)."""

    name: str
    justify: Literal["left", "right", "center"] = "left"
    kind: Literal["keep", "text"] = "keep"
    drop: int = 0


def money(x: float, decimals: int = 0) -> str:
    """Dollars with thousands separators, a leading minus for credits: never abbreviated."""
    return f"-${-x:,.{decimals}f}" if x < 0 else f"${x:,.{decimals}f}"


def new_table(title: str) -> Table:
    """A plain Rich table (callers that fit columns themselves use ``print_table``)."""
    return Table(title=title, show_lines=False, expand=False)


def _cell_width(cell: str) -> int:
    return max((len(part) for part in Text.from_markup(cell).plain.split("\n")), default=0)


def _longest_word(cell: str) -> int:
    return max((len(w) for w in Text.from_markup(cell).plain.split()), default=0)


def _needed(cols: Sequence[Col], widths: Sequence[int], floors: Sequence[int]) -> int:
    total = 1
    for c, w, f in zip(cols, widths, floors, strict=True):
        total += _PER_COLUMN + (w if c.kind == "keep" else min(w, max(f, _MIN_TEXT)))
    return total


def print_table(
    console: Console,
    title: str,
    cols: Sequence[Col],
    rows: Sequence[Sequence[str]],
    *,
    wide: bool = False,
    footer: Sequence[str] = (),
) -> list[str]:
    """Print ``rows`` under ``cols`` without cutting a ``keep`` cell; return the dropped headers.

    ``wide`` prints every column at full width on a console as wide as the table needs.
    """
    widths = [max([len(c.name), *(_cell_width(r[i]) for r in rows)]) for i, c in enumerate(cols)]
    # A wrapping column is never narrower than its longest word: "p5.48xlarge" wraps whole.
    floors = [max([len(c.name), *(_longest_word(r[i]) for r in rows)]) for i, c in enumerate(cols)]
    keep = list(range(len(cols)))
    dropped: list[str] = []
    if not wide:
        by_rank = sorted((i for i, c in enumerate(cols) if c.drop > 0), key=lambda i: -cols[i].drop)
        while (
            by_rank
            and _needed(
                [cols[i] for i in keep], [widths[i] for i in keep], [floors[i] for i in keep]
            )
            > console.width
        ):
            rank = cols[by_rank[0]].drop
            for gone in [i for i in by_rank if cols[i].drop == rank]:
                by_rank.remove(gone)
                keep.remove(gone)
                dropped.append(cols[gone].name)
    table = Table(title=title, show_lines=False, expand=False)
    for i in keep:
        c = cols[i]
        if c.kind == "keep":
            table.add_column(
                c.name, justify=c.justify, no_wrap=True, min_width=widths[i], overflow="fold"
            )
        else:
            table.add_column(
                c.name, justify=c.justify, overflow="fold", min_width=min(widths[i], _MIN_TEXT)
            )
    for r in rows:
        table.add_row(*(r[i] for i in keep))
    target = console
    if wide:
        full = sum(widths) + _PER_COLUMN * len(cols) + 1
        target = Console(
            highlight=False,
            width=max(full, len(title), console.width),
            force_terminal=console.is_terminal,
        )
    target.print(table)
    for line in footer:
        target.print(line)
    if dropped:
        print_wrapped(
            target,
            f"[dim]{console.width} columns: left out {', '.join(dropped)} to keep names and "
            "prices whole; --wide shows every column[/dim]",
        )
    return dropped


def print_wrapped(console: Console, text: str, *, indent: int = 0, hang: str = "") -> None:
    """``text`` (Rich markup) wrapped to the console, wrapped lines never back at column 0.

    A short ``hang`` ("warning:", "1.") stands at the left and the text wraps under itself; a
    long one ("Quote (instances × …):") starts the first line and the rest is indented by two.
    A word (a date, an instance name) is never split unless it is wider than the console.
    """
    head = Text.from_markup(hang)
    under = indent + (len(head.plain) + 1 if hang and len(head.plain) <= _HANG else 2)
    body = Text(" " * indent) + (head + Text(" ") if hang else Text()) + Text.from_markup(text)
    # The first line has the whole width; the rest wrap in what is left beside the indent.
    first = body.wrap(console, console.width)[0]
    rest = body[len(first.plain) :]
    rest = rest[len(rest.plain) - len(rest.plain.lstrip()) :]
    first.rstrip()
    console.print(first, overflow="fold", crop=False)
    if rest.plain:
        for line in rest.wrap(console, max(console.width - under, 20)):
            line.rstrip()
            console.print(Text(" " * under) + line, overflow="fold", crop=False)


def align_money(cells: Sequence[str]) -> list[str]:
    """Money cells of one column padded so that their decimal points line up ("$0.0125" over
    "   $2.50"), for a left-justified column (``Col(..., "left")``): Rich trims the trailing
    spaces of a right-justified cell, so the padding goes in front and after, never as
    zeros that would print "$1,983.6800". Other cells (blank, "n/a") are left alone."""

    def parts(c: str) -> tuple[int, int]:
        whole, _, frac = c.partition(".")
        return len(whole), len(frac) + (1 if frac else 0)

    money_cells = [c for c in cells if c.startswith(("$", "-$"))]
    if not money_cells:
        return list(cells)
    wide = max(parts(c)[0] for c in money_cells)
    tail = max(parts(c)[1] for c in money_cells)
    return [
        " " * (wide - parts(c)[0]) + c + " " * (tail - parts(c)[1]) if c in money_cells else c
        for c in cells
    ]
