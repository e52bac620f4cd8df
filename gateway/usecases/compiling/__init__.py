"""Compile: episodes into typed facts (ARCHITECTURE §12)."""
