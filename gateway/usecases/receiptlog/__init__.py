"""The receipt log: writing receipts, the group commit and signed checkpoints."""
