"""A stored receipt read back as typed values: its header and its kind's members, converted
from the exact signed bytes (`msgspec.convert`; a body of another shape is a
`msgspec.ValidationError`, which only the console reads leniently)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import msgspec

from gateway.domain.principal import Principal
from gateway.responses.receipt_parts import JudgedRecord, ReceiptHeader, Subject
from gateway.usecases.receiptlog.kinds import Kind
from receipts import decode_body

__all__ = ["Receipt", "judged_principal", "read_receipt"]

Body = TypeVar("Body", bound=msgspec.Struct)


@dataclass(frozen=True, slots=True)
class Receipt(Generic[Body]):
    header: ReceiptHeader
    body: Body


def read_receipt(raw: bytes, kind: Kind[Body]) -> Receipt[Body]:
    """The receipt whose signed body is `raw`, read as a receipt of `kind`."""
    decoded = decode_body(raw)
    return Receipt(msgspec.convert(decoded, ReceiptHeader), kind.read(decoded))


def judged_principal(
    header: ReceiptHeader, judged: Subject | JudgedRecord, namespaces: Sequence[str]
) -> Principal:
    """Whom a receipt's policy judged (its subject, or the agent a replay judged again), as a
    principal of the receipt's tenant limited to the request's namespaces."""
    return Principal(
        tenant_id=header.tenant_id,
        key_id=judged.key_id,
        role=judged.role,
        agent_id=judged.agent_id,
        namespaces=tuple(namespaces),
        purposes=None,
    )
