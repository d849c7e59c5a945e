"""The run registry's first schema: runs, their ledger lines, their actuals.

Revision ID: 0001
Revises:
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the three tables."""
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("record_version", sa.Integer, nullable=False),
        sa.Column("tool_version", sa.String(40), nullable=False),
        sa.Column("plan_source", sa.Text, nullable=False),
        sa.Column("plan_text", sa.Text, nullable=False),
        sa.Column("plan", sa.JSON, nullable=False),
        sa.Column("forecast", sa.JSON, nullable=False),
        sa.Column("catalog_version", sa.String(80), nullable=False),
        sa.Column("prices_as_of", sa.String(10), nullable=False),
        sa.Column("provider", sa.String(20), nullable=False),
        sa.Column("gpus", sa.Integer, nullable=False),
        sa.Column("gpu_node_hours", sa.Float, nullable=False),
        sa.Column("total_usd", sa.Float, nullable=False),
        sa.Column("p10_usd", sa.Float, nullable=False),
        sa.Column("p50_usd", sa.Float, nullable=False),
        sa.Column("p90_usd", sa.Float, nullable=False),
        sa.Column("by_category", sa.JSON, nullable=False),
    )
    op.create_table(
        "ledger_lines",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("category", sa.String(40), nullable=False),
        sa.Column("bill_category", sa.String(40), nullable=False),
        sa.Column("item", sa.Text, nullable=False),
        sa.Column("quantity", sa.Float, nullable=False),
        sa.Column("unit", sa.String(80), nullable=False),
        sa.Column("unit_price_usd", sa.Float, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=False),
        sa.Column("basis", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("provenance", sa.String(40), nullable=False),
        sa.Column("service_category", sa.String(80), nullable=False),
        sa.Column("pricing_category", sa.String(40), nullable=False),
    )
    op.create_index("ix_ledger_lines_run_id", "ledger_lines", ["run_id"])
    op.create_table(
        "actuals",
        sa.Column(
            "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("bill_files", sa.JSON, nullable=False),
        sa.Column("engine", sa.String(20), nullable=False),
        sa.Column("where", sa.JSON, nullable=False),
        sa.Column("rows", sa.Integer, nullable=False),
        sa.Column("currency", sa.String(8), nullable=False),
        sa.Column("total_usd", sa.Float, nullable=False),
        sa.Column("by_category", sa.JSON, nullable=False),
        sa.Column("gpu_instance_hours", sa.Float, nullable=False),
        sa.Column("period_start", sa.String(10), nullable=True),
        sa.Column("period_end", sa.String(10), nullable=True),
    )


def downgrade() -> None:
    """Never run by trainbill (a newer schema is refused, not downgraded); kept for Alembic."""
    op.drop_table("actuals")
    op.drop_table("ledger_lines")
    op.drop_table("runs")
