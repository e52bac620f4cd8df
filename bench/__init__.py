"""Benchmarks for ctxgw: ``python -m bench <name>`` (ARCHITECTURE §10). Results go to bench/out/."""
