"""The option aliases and helpers shared by every command that reads bills (``bill``,
``calibrate``, ``runs close``), defined once; importing this module registers no command."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["Since", "Until", "Where", "_Engine", "_Files", "_Json", "_money"]

# Strings, not ``Path``: ``Path`` folds the ``//`` of an ``s3a://bucket/key`` URI.
_Files = Annotated[
    list[str],
    typer.Argument(
        help=(
            "FOCUS 1.0-1.2 or CUR 2.0 files (.csv, .csv.gz, .parquet) or export folders "
            "(s3://, s3a:// with --engine spark; table names with --engine trino/athena)."
        ),
        show_default=False,
    ),
]
_Engine = Annotated[
    str,
    typer.Option(
        "--engine",
        help=(
            "Query engine: duckdb (embedded), spark (PySpark; TRAINBILL_SPARK_MASTER), "
            "trino (TRAINBILL_TRINO_URL) or athena (TRAINBILL_ATHENA_S3_STAGING_DIR); "
            "with trino/athena the arguments are table names."
        ),
    ),
]
_Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
#: The row filters of every command that reads bills (``trainbill.bills.filters``).
Where = Annotated[
    list[str] | None,
    typer.Option(
        "--where",
        help="Only rows with this tag: tag:KEY=VALUE (repeatable; every one must match).",
    ),
]
Since = Annotated[
    str | None, typer.Option("--since", help="Only rows charged on or after YYYY-MM-DD.")
]
Until = Annotated[
    str | None, typer.Option("--until", help="Only rows charged on or before YYYY-MM-DD.")
]


def _money(value: float, currency: str) -> str:
    return f"{value:,.2f} {currency}".strip()
