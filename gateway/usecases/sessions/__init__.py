"""Sessions: history, state and session contexts (ARCHITECTURE §11)."""
