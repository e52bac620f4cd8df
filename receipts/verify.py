"""Offline verification of single receipts and of exported logs.

`verify_export` reads an export (`receipts.export`) line by line and checks, in this order for
each receipt: canonical body (``not_canonical``/``malformed``), header, tenant
(``tenant_mismatch``), signatures (``unknown_key``/``signature_mismatch``/``signature_missing``:
the Ed25519 signature always, the HMAC one too when the keyring holds HMAC secrets, see
`receipts.signing`), that the line's ``seq`` and ``leaf`` match the body (``malformed``),
gapless ``seq`` (``seq_gap``) and the ``prev`` chain (``chain_break``). A filtered export (only
some receipts, e.g. those that disclosed one memory) has gaps: a gap is accepted between two
lines that both carry an inclusion proof, the chain is checked wherever lines are consecutive,
and every line must then be proven against a checkpoint (below; ``proof_invalid`` otherwise).
That proves each line is in the log, not that the filter missed no receipt: only the whole log
shows that. Then the checkpoints:

- the export's own checkpoint line and the caller's trusted checkpoint (if any) must verify with
  the keyring's Ed25519 keys and name the tenant's log (``checkpoint_invalid``/``unknown_key``);
- the export's checkpoint must not be older than the trusted one, nor differ at equal size
  (``consistency_invalid``): an old checkpoint presented as the newest is a rollback;
- each checkpoint must be proven by the export (``proof_invalid``): if the export starts at
  seq 1 and reaches the checkpoint's size, the root of its first ``size`` leaves must equal the
  checkpoint root; otherwise every exported receipt within the checkpoint must carry an
  inclusion proof for that size. So a truncated export is caught against any checkpoint that
  committed to more.

An export ends with its end line: the checkpoint and the number of receipt lines. Without one
(an empty file, a stream cut off, the line dropped) the export is ``incomplete``, unless the
caller passes ``allow_unanchored`` (then nothing anchors it: the report says so); a count that
is not the lines' is ``incomplete`` always. ``allow_unanchored`` means that and nothing else: it
waives no signature, no chain link and no proof.

Finally, with ``receipt_id`` that receipt must be present (``not_found``), and a delivered
``bundle`` must match its ``bundle`` field (``bundle_mismatch``).

Every check raises; the `VerifyReport` returned on success says what was proven, including what
could not be (receipts newer than the checkpoint, no checkpoint at all).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from receipts.body import GENESIS_PREV, ReceiptHeader, check_bundle, read_header
from receipts.canonical import decode_body
from receipts.checkpoint import Checkpoint, log_origin, verify_checkpoint
from receipts.dsse import Envelope
from receipts.errors import (
    ChainBreakError,
    ConsistencyInvalidError,
    IncompleteError,
    MalformedError,
    NotFoundError,
    ProofInvalidError,
    SeqGapError,
    TenantMismatchError,
    VerificationError,
)
from receipts.export import ExportedCheckpoint, InclusionProof, parse_line
from receipts.keyring import Keyring
from receipts.merkle import EMPTY_ROOT, leaf_hash, root
from receipts.proof_verification import verify_inclusion
from receipts.signing import verified_keyids

__all__ = ["ReceiptCheck", "VerifyReport", "verify_export", "verify_receipt"]


@dataclass(frozen=True, slots=True)
class ReceiptCheck:
    """The receipt asked for with ``receipt_id``."""

    receipt_id: str
    seq: int
    leaf: bytes
    bundle_checked: bool


@dataclass(frozen=True, slots=True)
class VerifyReport:
    tenant_id: str | None
    receipts: int
    first_seq: int | None
    last_seq: int | None
    keyids: tuple[str, ...]
    """Keys whose signatures were verified, sorted. Every receipt's Ed25519 signature is among
    them, and its HMAC signature when ``hmac_checked``."""
    hmac_checked: bool
    """The keyring holds HMAC secrets, so every receipt's HMAC signature was required and
    verified. False with a public keyring: Ed25519 signatures only."""
    unchecked_keyids: tuple[str, ...]
    """Keys of signatures the export carries but the keyring cannot check (HMAC signatures, with
    a public keyring), sorted."""
    root: bytes | None
    """Root over all exported leaves; only when the export starts at seq 1."""
    checkpoint: Checkpoint | None
    """The newest checkpoint proven against the export."""
    trusted_checkpoint: Checkpoint | None
    """The caller's checkpoint, proven consistent with the export (and with ``checkpoint``)."""
    proven: int
    """Exported receipts proven to be in ``checkpoint``."""
    links: int
    """``prev`` links checked: one per pair of lines with consecutive seqs."""
    gaps: int
    """Places where the seq jumps (a filtered export): accepted because the lines on both sides
    carry inclusion proofs, each of which was checked. The chain is not followed across them."""
    unexported: int
    """Receipts between ``first_seq`` and ``last_seq`` that the export leaves out."""
    complete: bool
    """The export is the whole log ``checkpoint`` commits to (recomputed root matched)."""
    receipt: ReceiptCheck | None


def verify_receipt(envelope: Envelope, tenant_id: str, keyring: Keyring) -> None:
    """Verify one envelope: canonical body, header, tenant and signatures."""
    _check_envelope(envelope, tenant_id, keyring)


def verify_export(  # noqa: C901  one pass over the export, the checks in report order
    lines: Iterable[str],
    keyring: Keyring,
    checkpoint_text: str | None = None,
    bundle: bytes | None = None,
    receipt_id: str | None = None,
    *,
    tenant_id: str | None = None,
    origin: str | None = None,
    allow_unanchored: bool = False,
) -> VerifyReport:
    """Verify an export; see the module docstring for the checks and their codes.

    ``tenant_id`` defaults to the tenant of the first receipt; ``origin`` (the checkpoints' log
    name) to `log_origin` of the tenant. ``bundle`` needs ``receipt_id`` unless the export holds
    exactly one receipt (``ValueError`` otherwise: a usage error, not evidence).
    """
    tenant = tenant_id
    leaves: list[bytes] = []
    seqs: list[int] = []
    proofs: dict[int, InclusionProof] = {}
    keyids: set[str] = set()
    unchecked: set[str] = set()
    first_seq: int | None = None
    found: tuple[ReceiptHeader, bytes] | None = None
    last: tuple[ReceiptHeader, bytes] | None = None
    embedded: ExportedCheckpoint | None = None
    last_proven = False  # whether the previous line carried an inclusion proof
    links = gaps = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            if embedded is not None:
                raise MalformedError("a line follows the checkpoint line")
            item = parse_line(line)
            if isinstance(item, ExportedCheckpoint):
                embedded = item
                continue
            header, signers = _check_envelope(item.envelope, tenant, keyring)
            tenant = header.tenant_id
            keyids.update(signers)
            unchecked.update(s.keyid for s in item.envelope.signatures if s.keyid not in signers)
            leaf = leaf_hash(item.envelope.payload)
            if item.seq != header.seq or item.leaf != leaf:
                raise MalformedError("line seq or leaf disagrees with the signed body")
            proven_here = item.inclusion_proof is not None
            _check_link(header, last, gap_allowed=proven_here and last_proven)
            last_proven = proven_here
            if last is not None:
                linked = header.seq == last[0].seq + 1
                links += linked
                gaps += not linked
        except VerificationError as exc:
            exc.context.setdefault("line", number)
            raise
        if first_seq is None:
            first_seq = header.seq
        leaves.append(leaf)
        seqs.append(header.seq)
        if item.inclusion_proof is not None:
            proofs[header.seq] = item.inclusion_proof
        if receipt_id is not None and header.receipt_id == receipt_id:
            found = (header, leaf)
        last = (header, leaf)

    if embedded is None and not allow_unanchored:
        raise IncompleteError(
            "the export has no end line (empty, cut off, or its checkpoint dropped); "
            "pass allow_unanchored to verify it without one"
        )
    if embedded is not None and embedded.receipts != len(leaves):
        raise IncompleteError(
            f"the end line counts {embedded.receipts} receipts, the export holds {len(leaves)}"
        )
    if receipt_id is not None and found is None:
        raise NotFoundError("receipt is not in the export", receipt_id=receipt_id)
    if bundle is not None and found is None:
        if len(leaves) != 1 or last is None:
            raise ValueError("checking a bundle needs receipt_id unless the export has one receipt")
        found = last

    expected_origin = origin
    if expected_origin is None and tenant is not None:
        expected_origin = log_origin(tenant)
    trusted = _open_checkpoint(checkpoint_text, "trusted", keyring, expected_origin)
    own = _open_checkpoint(
        None if embedded is None else embedded.text, "export", keyring, expected_origin
    )
    if own is not None and trusted is not None:
        if own.size < trusted.size:
            raise ConsistencyInvalidError(
                f"the export's checkpoint (size {own.size}) is older than the trusted checkpoint "
                f"(size {trusted.size})"
            )
        if own.size == trusted.size and own.root != trusted.root:
            raise ConsistencyInvalidError("two checkpoints of equal size have different roots")
    proven, complete = 0, False
    gapless = first_seq is None or seqs[-1] - first_seq + 1 == len(seqs)
    for checkpoint in (trusted, own):
        if checkpoint is not None:
            proven, complete = _prove(
                checkpoint, seqs if not gapless else None, first_seq, leaves, proofs
            )
    newest = own or trusted
    if not gapless and proven != len(leaves):
        # Gaps were accepted on the strength of the lines' proofs: they must all be checked.
        raise ProofInvalidError(
            f"a filtered export (gaps in seq) must prove every line against a checkpoint; "
            f"{proven} of {len(leaves)} proven"
        )

    if bundle is not None and found is not None:
        check_bundle(found[0], bundle)
    return VerifyReport(
        tenant_id=tenant,
        receipts=len(leaves),
        first_seq=first_seq,
        last_seq=None if last is None else last[0].seq,
        keyids=tuple(sorted(keyids)),
        hmac_checked=bool(keyring.hmac),
        unchecked_keyids=tuple(sorted(unchecked)),
        root=root(leaves) if first_seq == 1 and gapless else None,
        checkpoint=newest,
        trusted_checkpoint=trusted,
        proven=proven,
        links=links,
        gaps=gaps,
        unexported=0 if first_seq is None else seqs[-1] - first_seq + 1 - len(seqs),
        complete=complete,
        receipt=None
        if found is None
        else ReceiptCheck(found[0].receipt_id, found[0].seq, found[1], bundle is not None),
    )


def _check_envelope(
    envelope: Envelope, tenant_id: str | None, keyring: Keyring
) -> tuple[ReceiptHeader, tuple[str, ...]]:
    header = read_header(decode_body(envelope.payload))
    if tenant_id is not None and header.tenant_id != tenant_id:
        raise TenantMismatchError(
            f"receipt of tenant {header.tenant_id!r} where {tenant_id!r} was expected",
            receipt_id=header.receipt_id,
        )
    try:
        signers = verified_keyids(envelope, header.tenant_id, keyring)
    except VerificationError as exc:
        exc.context.setdefault("receipt_id", header.receipt_id)
        raise
    return header, signers


def _open_checkpoint(
    text: str | None, which: str, keyring: Keyring, origin: str | None
) -> Checkpoint | None:
    if text is None:
        return None
    try:
        return verify_checkpoint(text, keyring.checkpoint_keys(), origin=origin)
    except VerificationError as exc:
        exc.context.setdefault("checkpoint", which)
        raise


def _check_link(
    header: ReceiptHeader, previous: tuple[ReceiptHeader, bytes] | None, *, gap_allowed: bool
) -> None:
    """The chain to the previous line: consecutive, with ``prev`` its leaf hash. A gap (a
    filtered export) only between two lines that each carry an inclusion proof."""
    if previous is None:
        if header.seq == 1 and header.prev != GENESIS_PREV:
            raise ChainBreakError("seq 1 must have the all-zero prev", seq=1)
        return
    previous_header, previous_leaf = previous
    if header.seq <= previous_header.seq:
        raise SeqGapError(
            f"seq {header.seq} follows seq {previous_header.seq}", receipt_id=header.receipt_id
        )
    if header.seq != previous_header.seq + 1:
        if gap_allowed:
            return  # the chain cannot be followed across the gap; the proofs stand for it
        raise SeqGapError(
            f"seq {header.seq} follows seq {previous_header.seq}", receipt_id=header.receipt_id
        )
    if header.prev != previous_leaf.hex():
        raise ChainBreakError(
            f"prev of seq {header.seq} is not the leaf hash of seq {previous_header.seq}",
            receipt_id=header.receipt_id,
        )


def _prove(  # noqa: C901  the cases of a checkpoint against a full or filtered export
    checkpoint: Checkpoint,
    gapped_seqs: list[int] | None,
    first_seq: int | None,
    leaves: list[bytes],
    proofs: dict[int, InclusionProof],
) -> tuple[int, bool]:
    """Prove ``checkpoint`` against the export: (receipts proven, export is complete).
    ``gapped_seqs`` are the lines' seqs when the export has gaps (a filtered export), else None."""
    size = checkpoint.size
    if size == 0:
        if checkpoint.root != EMPTY_ROOT:
            raise ProofInvalidError("checkpoint of size 0 does not carry the empty-tree root")
        return 0, first_seq in (None, 1)
    if first_seq is None:
        raise ProofInvalidError(f"the checkpoint commits to {size} receipts; the export has none")
    if gapped_seqs is None and first_seq == 1 and len(leaves) >= size:
        if root(leaves[:size]) != checkpoint.root:
            raise ProofInvalidError(
                f"the first {size} exported receipts do not hash to the checkpoint root",
                size=size,
            )
        complete = True
    elif first_seq > size:
        return 0, False  # every exported receipt is newer than this checkpoint
    else:
        complete = False
    # Without the whole prefix, each receipt inside the checkpoint needs its own proof; with it,
    # proofs are redundant but must still be right.
    seqs = gapped_seqs or range(first_seq, first_seq + len(leaves))
    covered = [(seq, leaf) for seq, leaf in zip(seqs, leaves, strict=True) if seq <= size]
    for seq, leaf in covered:
        proof = proofs.get(seq)
        if proof is None or proof.tree_size != size:
            if complete:
                continue
            raise ProofInvalidError(
                f"the checkpoint commits to {size} receipts, the export is not that log "
                f"(seq {first_seq}..{seqs[-1]}) and seq {seq} has no "
                f"inclusion proof for size {size}",
                seq=seq,
            )
        try:
            verify_inclusion(leaf, seq - 1, size, proof.hashes, checkpoint.root)
        except ProofInvalidError as exc:
            exc.context.setdefault("seq", seq)
            raise
    return len(covered), complete
