"""The registry's tables (SQLAlchemy 2 declarative models).

A run is stored complete enough to reproduce its forecast without the tool that made it: the
plan as written (``plan_text``), the resolved inputs (``plan``), the catalog version and price
date, every ledger line with its unit price, basis and source (``ledger_lines``), the P10 /
P50 / P90 totals and the tool version. ``record_version`` versions what a run row holds (the
JSON documents' shape); the schema itself is versioned by Alembic (``migrations/``). Actuals
live in their own table, one row per closed run, so closing again (``--replace``) replaces
one row and a run can be reopened by deleting it.

Imported only by ``trainbill.runs.store`` (SQLAlchemy is never imported by a forecast).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = ["RECORD_VERSION", "ActualRow", "Base", "LedgerLineRow", "RunRow"]

#: Shape of what a run row holds (its JSON documents); bumped with a migration when it changes.
RECORD_VERSION = 1


class Base(DeclarativeBase):
    """The registry's metadata (one per schema)."""


class RunRow(Base):
    """One recorded forecast."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    record_version: Mapped[int] = mapped_column(Integer)
    tool_version: Mapped[str] = mapped_column(String(40))
    plan_source: Mapped[str] = mapped_column(Text)
    plan_text: Mapped[str] = mapped_column(Text)
    plan: Mapped[dict[str, Any]] = mapped_column(JSON)
    forecast: Mapped[dict[str, Any]] = mapped_column(JSON)
    catalog_version: Mapped[str] = mapped_column(String(80))
    prices_as_of: Mapped[str] = mapped_column(String(10))
    provider: Mapped[str] = mapped_column(String(20))
    gpus: Mapped[int] = mapped_column(Integer)
    gpu_node_hours: Mapped[float] = mapped_column(Float)
    total_usd: Mapped[float] = mapped_column(Float)
    p10_usd: Mapped[float] = mapped_column(Float)
    p50_usd: Mapped[float] = mapped_column(Float)
    p90_usd: Mapped[float] = mapped_column(Float)
    #: The forecast folded into the bill's categories (``bills.forecast_by_bill_category``).
    by_category: Mapped[dict[str, float]] = mapped_column(JSON)
    lines: Mapped[list[LedgerLineRow]] = relationship(
        back_populates="run", cascade="all, delete-orphan", order_by="LedgerLineRow.position"
    )
    actual: Mapped[ActualRow | None] = relationship(
        back_populates="run", cascade="all, delete-orphan", uselist=False
    )


class LedgerLineRow(Base):
    """One ledger line of a recorded forecast, with the price it was worked out from."""

    __tablename__ = "ledger_lines"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    category: Mapped[str] = mapped_column(String(40))
    bill_category: Mapped[str] = mapped_column(String(40))
    item: Mapped[str] = mapped_column(Text)
    quantity: Mapped[float] = mapped_column(Float)
    unit: Mapped[str] = mapped_column(String(80))
    unit_price_usd: Mapped[float] = mapped_column(Float)
    cost_usd: Mapped[float] = mapped_column(Float)
    basis: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text)
    provenance: Mapped[str] = mapped_column(String(40))
    service_category: Mapped[str] = mapped_column(String(80))
    pricing_category: Mapped[str] = mapped_column(String(40))
    run: Mapped[RunRow] = relationship(back_populates="lines")


class ActualRow(Base):
    """What the bill says a closed run cost: its tagged rows, by bill category."""

    __tablename__ = "actuals"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    closed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    bill_files: Mapped[list[str]] = mapped_column(JSON)
    engine: Mapped[str] = mapped_column(String(20))
    where: Mapped[dict[str, Any]] = mapped_column(JSON)
    rows: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(8))
    total_usd: Mapped[float] = mapped_column(Float)
    by_category: Mapped[dict[str, float]] = mapped_column(JSON)
    gpu_instance_hours: Mapped[float] = mapped_column(Float)
    period_start: Mapped[str | None] = mapped_column(String(10), nullable=True)
    period_end: Mapped[str | None] = mapped_column(String(10), nullable=True)
    run: Mapped[RunRow] = relationship(back_populates="actual")
