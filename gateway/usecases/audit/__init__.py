"""Audit: reading, verifying, exporting and replaying receipts; the console's views."""
