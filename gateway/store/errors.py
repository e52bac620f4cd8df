"""Store errors: driver failures translated at the connection layer into the gateway's own types.

Each is a `gateway.domain.errors.UnavailableError` (503, fail closed, no content), so the edge maps
them like any other gateway error and never sees the store.

UnavailableError
└── StoreError
    ├── DatabaseUnavailableError   the server cannot be reached or started
    ├── ExtensionMissingError      pgvector is not installed on the server
    ├── MigrationError             a migration failed or an applied file was edited
    ├── PrivilegedLoginError       the gateway would log in as a superuser or a BYPASSRLS role
    └── ReceiptWriteError          a receipt could not be appended (the disclosure is refused)
"""

from __future__ import annotations

from gateway.domain.errors import UnavailableError

__all__ = [
    "DatabaseUnavailableError",
    "ExtensionMissingError",
    "MigrationError",
    "PrivilegedLoginError",
    "ReceiptWriteError",
    "StoreError",
]


class StoreError(UnavailableError):
    """Base of every error the store edge raises on purpose. The message carries the driver's
    words, for the log; `summary` says what failed in ours, for clients."""

    code = "store_unavailable"
    summary = "the database is unavailable"


class DatabaseUnavailableError(StoreError):
    pass


class ExtensionMissingError(StoreError):
    pass


class MigrationError(StoreError):
    pass


class PrivilegedLoginError(StoreError):
    summary = "the gateway's database login is not least-privileged"


class ReceiptWriteError(StoreError):
    code = "receipt_unavailable"
    summary = "the receipt could not be written"
