"""The pure core: decisions without I/O (no framework, no driver, no clock, no randomness)."""
