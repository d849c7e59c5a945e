"""The run registry: every forecast remembered, closed against its real bill by tag, and the
team's own factors learned from the closed runs.

``trainbill.runs.api`` holds the use cases (record, close, list, show, delete, calibrate,
export); ``store`` the database (SQLite by default, PostgreSQL for a team; SQLAlchemy 2 and
Alembic); ``models`` the tables; ``history`` the factors' arithmetic (pure); ``focus_export``
the FOCUS rows. Importing this package imports none of them: SQLAlchemy loads only when the
registry is used, never on a ``trainbill forecast``.
"""
