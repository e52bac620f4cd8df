"""Use cases: orchestrate the store and the pure core for one request."""
