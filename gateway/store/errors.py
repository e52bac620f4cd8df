"""Store errors: driver failures translated at the connection layer into the gateway's own types.

Each is a `gateway.errors.UnavailableError` (503, fail closed, no content), so the edge maps
them like any other gateway error and never sees the store.

UnavailableError
└── StoreError
    ├── DatabaseUnavailableError   the server cannot be reached or started
    ├── ExtensionMissingError      pgvector is not installed on the server
    ├── MigrationError             a migration failed or an applied file was edited
    └── ReceiptWriteError          a receipt could not be appended (the disclosure is refused)
"""

from __future__ import annotations

from gateway.errors import UnavailableError

__all__ = [
    "DatabaseUnavailableError",
    "ExtensionMissingError",
    "MigrationError",
    "ReceiptWriteError",
    "StoreError",
]


class StoreError(UnavailableError):
    """Base of every error the store edge raises on purpose."""

    code = "store_unavailable"


class DatabaseUnavailableError(StoreError):
    pass


class ExtensionMissingError(StoreError):
    pass


class MigrationError(StoreError):
    pass


class ReceiptWriteError(StoreError):
    code = "receipt_unavailable"
