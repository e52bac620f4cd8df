"""The export format: a tenant's receipt log as JSON Lines, verifiable offline.

Each line is one RFC 8785 JSON object followed by ``"\\n"`` (UTF-8). Two kinds of line:

Receipt line, in ascending ``seq`` order without gaps::

    {"envelope": <DSSE envelope JSON, see receipts.dsse>,
     "inclusion_proof": {"hashes": ["<hex>", ...], "tree_size": <int>},   (optional)
     "leaf": "<hex SHA-256(0x00 ‖ body)>",
     "seq": <int, = body log.seq>}

End line, exactly one, and then the last line: the export is complete, with its checkpoint and
the number of receipt lines before it (so a dropped line or a cut-off stream is detected)::

    {"checkpoint": "<signed note text, see receipts.checkpoint>", "receipts": <int>}

``seq`` and ``leaf`` repeat what the signed body implies so that a reader can index the log
without decoding bodies; the verifier checks that they agree. ``inclusion_proof`` proves the
receipt is leaf ``seq - 1`` of the tree of ``tree_size`` (RFC 9162 §2.1.3); it is needed only when
the export is an extract (it does not start at seq 1, or stops before the checkpoint's size).
A complete export needs no proofs: the verifier recomputes the root from all leaves.

The gateway writes lines with `export_line` and `checkpoint_line` only, so this module is the
one definition of the format. Blank lines are ignored on read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from receipts.canonical import canonicalize
from receipts.dsse import Envelope
from receipts.errors import MalformedError
from receipts.merkle import HASH_SIZE

__all__ = [
    "ExportedCheckpoint",
    "ExportedReceipt",
    "InclusionProof",
    "checkpoint_line",
    "export_line",
    "parse_line",
]


@dataclass(frozen=True, slots=True)
class InclusionProof:
    tree_size: int
    hashes: tuple[bytes, ...]

    def to_json(self) -> dict[str, object]:
        return {"hashes": [h.hex() for h in self.hashes], "tree_size": self.tree_size}

    @classmethod
    def from_json(cls, obj: object) -> InclusionProof:
        if not isinstance(obj, Mapping) or set(obj) != {"hashes", "tree_size"}:
            raise MalformedError("inclusion_proof needs exactly hashes and tree_size")
        hashes = obj["hashes"]
        if not isinstance(hashes, list):
            raise MalformedError("inclusion_proof hashes is not a list")
        return cls(
            tree_size=_count(obj["tree_size"], "inclusion_proof tree_size"),
            hashes=tuple(_digest(h, "inclusion_proof hash") for h in hashes),
        )


@dataclass(frozen=True, slots=True)
class ExportedReceipt:
    envelope: Envelope
    seq: int
    leaf: bytes
    inclusion_proof: InclusionProof | None = None


@dataclass(frozen=True, slots=True)
class ExportedCheckpoint:
    """The end line: the signed checkpoint and how many receipt lines the export holds."""

    text: str
    receipts: int


def export_line(
    envelope: Envelope,
    seq: int,
    leaf: bytes,
    inclusion_proof: InclusionProof | Sequence[bytes] | None = None,
    *,
    tree_size: int | None = None,
) -> str:
    """One receipt line, newline included.

    ``inclusion_proof`` is an `InclusionProof`, or a list of hashes together with ``tree_size``.
    Written as given, unchecked: an export must show the stored log, tampered or not.
    """
    line: dict[str, object] = {"envelope": envelope.to_json(), "leaf": leaf.hex(), "seq": seq}
    if inclusion_proof is not None:
        if not isinstance(inclusion_proof, InclusionProof):
            if tree_size is None:
                raise ValueError("an inclusion proof given as hashes needs tree_size")
            inclusion_proof = InclusionProof(tree_size, tuple(inclusion_proof))
        line["inclusion_proof"] = inclusion_proof.to_json()
    return canonicalize(line).decode("utf-8") + "\n"


def checkpoint_line(checkpoint_text: str, receipts: int) -> str:
    """The end line, newline included: it goes last and says the export holds `receipts`
    receipt lines, anchored in the checkpoint."""
    return (
        canonicalize({"checkpoint": checkpoint_text, "receipts": receipts}).decode("utf-8") + "\n"
    )


def parse_line(line: str) -> ExportedReceipt | ExportedCheckpoint:
    """Parse one non-blank export line; raises `MalformedError`."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise MalformedError(f"export line is not JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise MalformedError("export line is not a JSON object")
    if "checkpoint" in obj:
        text = obj["checkpoint"]
        if set(obj) != {"checkpoint", "receipts"} or not isinstance(text, str):
            raise MalformedError("the end line holds exactly a checkpoint text and a count")
        return ExportedCheckpoint(text, _count(obj["receipts"], "end line receipts"))
    keys = set(obj)
    if not {"envelope", "leaf", "seq"} <= keys <= {"envelope", "leaf", "seq", "inclusion_proof"}:
        raise MalformedError(f"export line has unexpected fields {sorted(keys)}")
    proof = obj.get("inclusion_proof")
    return ExportedReceipt(
        envelope=Envelope.from_json(obj["envelope"]),
        seq=_count(obj["seq"], "line seq"),
        leaf=_digest(obj["leaf"], "line leaf"),
        inclusion_proof=None if proof is None else InclusionProof.from_json(proof),
    )


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedError(f"{what} is not a non-negative integer")
    return value


def _digest(value: object, what: str) -> bytes:
    if not isinstance(value, str) or len(value) != 2 * HASH_SIZE:
        raise MalformedError(f"{what} is not a 64-digit hex hash")
    try:
        digest = bytes.fromhex(value)
    except ValueError as exc:
        raise MalformedError(f"{what} is not a 64-digit hex hash") from exc
    if len(digest) != HASH_SIZE:  # fromhex skips whitespace
        raise MalformedError(f"{what} is not a 64-digit hex hash")
    return digest
