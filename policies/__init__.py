"""ctxgw policy engine: YAML policy bundles, linted, evaluated, digested and tested.

Pure: no framework, database, clock or randomness; it imports neither `gateway` nor `receipts`.
"""
