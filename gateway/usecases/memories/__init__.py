"""Memories: writing versions, supersession, conflicts and erasure."""
