"""Store errors: driver failures translated at the connection layer into the gateway's own types.

StoreError
├── DatabaseUnavailableError   the server cannot be reached or started
├── ExtensionMissingError      pgvector is not installed on the server
└── MigrationError             a migration failed or an applied file was edited
"""

from __future__ import annotations

__all__ = [
    "DatabaseUnavailableError",
    "ExtensionMissingError",
    "MigrationError",
    "ReceiptWriteError",
    "StoreError",
]


class StoreError(Exception):
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
