"""Disclosures: context bundles, search, timeline and fetch through one pipeline, and refusals."""
