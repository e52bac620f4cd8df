"""Response bodies of the v1 contract (ARCHITECTURE §5) as msgspec Structs, one module per area.

Use cases return these values and handlers send them unchanged, so the OpenAPI document
(`/schema`) describes every body from the very types that encode it. The package imports only
msgspec and the standard library: any layer may build a response.

Every instant is a `Timestamp`: RFC 3339 in UTC with microseconds and a `Z`, the spelling receipt
bodies use (`gateway.usecases.receiptlog.recorder.rfc3339`), so one instant is one string everywhere.
"""
