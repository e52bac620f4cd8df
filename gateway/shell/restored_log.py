"""What an auditor checks in a restored database, tenant by tenant, offline (no gateway):

- every receipt verifies (canonical body, signatures by the keyring), the chain is gapless from
  genesis and the log head (`receipt_logs`) is its last leaf, so the next receipt chains to it;
- every stored checkpoint is signed by the keyring and commits to exactly the stored receipts at
  its size (its root recomputed from their leaves);
- the log is what the backup's manifest says was dumped (size and head), or extends it, and
- against a checkpoint the auditor kept from before the loss (`GET /v1/log/checkpoint`), the
  restored log is not shorter (a restore that lost the log's tail) and not another log (a fork).

The receipts are checked by `receipts.verify_export`, the function `python -m receipts verify`
runs, on the export lines the gateway itself would write for the restored log.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from gateway.store.database import connect
from gateway.store.dumps import (
    LogHeadRow,
    StoredCheckpoint,
    StoredReceipt,
    log_heads,
    read_checkpoints,
    read_receipts,
)
from gateway.store.receipts import whole_envelope
from gateway.store.replicas import ReplicaLag, replica_lag
from receipts import (
    ConsistencyInvalidError,
    Envelope,
    Keyring,
    MerkleFrontier,
    ProofInvalidError,
    VerificationError,
    log_origin,
)
from receipts.checkpoint import parse_checkpoint, verify_checkpoint
from receipts.export import checkpoint_line, export_line
from receipts.verify import verify_export

__all__ = ["LogCheck", "check_restored_logs", "read_lag", "trusted_by_tenant"]


@dataclass(frozen=True, slots=True)
class LogCheck:
    """One tenant's log after a restore; `problem` is None when every check passed."""

    tenant_id: str
    receipts: int
    checkpoints: int
    head: str  # hex of the last leaf: the next receipt's prev
    problem: str | None = None
    truncated: bool = False  # behind a trusted checkpoint: acknowledged receipts are missing

    @property
    def ok(self) -> bool:
        return self.problem is None


def trusted_by_tenant(notes: list[str]) -> dict[str, str]:
    """Trusted checkpoint notes by tenant (from their origin, `ctxgw/<tenant>`); the largest
    per tenant, since a log must extend every checkpoint it ever showed."""
    best: dict[str, tuple[int, str]] = {}
    for note in notes:
        checkpoint = parse_checkpoint(note)  # signatures are checked against the log's keyring
        prefix, _, tenant = checkpoint.origin.partition("/")
        if prefix != "ctxgw" or not tenant:
            raise ValueError(f"not a ctxgw checkpoint (origin {checkpoint.origin!r})")
        if tenant not in best or checkpoint.size > best[tenant][0]:
            best[tenant] = (checkpoint.size, note)
    return {tenant: note for tenant, (_, note) in best.items()}


def check_restored_logs(
    url: str,
    keyring: Keyring,
    *,
    trusted: Mapping[str, str] | None = None,
    expected: Mapping[str, tuple[int, str]] | None = None,
) -> list[LogCheck]:
    """Check every tenant's log in the database at `url` (a login that sees all tenants).
    `trusted`: checkpoint notes by tenant; `expected`: (size, head hex) by tenant, as dumped,
    which the log must equal or extend.
    A tenant named by either but absent from the database is a failed check."""
    trusted = trusted or {}
    expected = expected or {}
    checks = []
    with connect(url, autocommit=True) as conn:
        heads = {head.tenant_id: head for head in log_heads(conn)}
        for tenant_id in sorted(set(heads) | set(trusted) | set(expected)):
            head = heads.get(tenant_id) or LogHeadRow(tenant_id, 0, bytes(32), 0)
            checkpoints = read_checkpoints(conn, tenant_id)
            leaves: list[bytes] = []
            lines = _lines(read_receipts(conn, tenant_id), leaves, checkpoints[-1].note if checkpoints else None)  # fmt: skip
            check = _check(tenant_id, head, lines, leaves, checkpoints, keyring, trusted.get(tenant_id))  # fmt: skip
            if check.ok and tenant_id in expected:
                check = _extends(check, leaves, *expected[tenant_id])
            checks.append(check)
    return checks


def read_lag(url: str) -> ReplicaLag | None:
    """The lag of the server at `url` behind its primary, if it is a standby: the checks read a
    replica as well as a primary, and say how old what they read may be."""
    with connect(url, autocommit=True) as conn:
        return replica_lag(conn)


def _lines(rows: Iterator[StoredReceipt], leaves: list[bytes], note: str | None) -> Iterator[str]:
    """The restored log as the gateway exports it (receipt lines, then the end line anchoring
    it in its latest checkpoint); collects the leaves as they go by."""
    count = 0
    for row in rows:
        leaf = bytes(row.leaf)
        leaves.append(leaf)
        count += 1
        envelope = whole_envelope(row.envelope, bytes(row.body))
        yield export_line(Envelope.from_json(envelope), row.seq, leaf)
    if note is not None:
        yield checkpoint_line(note, count)


def _check(
    tenant_id: str,
    head: LogHeadRow,
    lines: Iterator[str],
    leaves: list[bytes],
    checkpoints: list[StoredCheckpoint],
    keyring: Keyring,
    trusted: str | None,
) -> LogCheck:
    base = LogCheck(tenant_id, 0, len(checkpoints), head.head.hex())
    try:
        report = verify_export(
            lines, keyring, checkpoint_text=trusted, tenant_id=tenant_id,
            allow_unanchored=not checkpoints,
        )  # fmt: skip
    except (ConsistencyInvalidError, ProofInvalidError) as exc:
        # verify_export checked the trusted checkpoint's signature before comparing logs.
        kept = 0 if trusted is None else parse_checkpoint(trusted).size
        if kept <= len(leaves):
            return _failed(base, str(exc))
        return LogCheck(
            tenant_id, len(leaves), len(checkpoints), head.head.hex(),
            f"TRUNCATED: the restored log holds {len(leaves)} receipts; a checkpoint kept by "
            f"an auditor commits to {kept}: {kept - len(leaves)} acknowledged receipts are "
            f"missing ({exc.code})",
            truncated=True,
        )  # fmt: skip
    except VerificationError as exc:
        return _failed(base, str(exc))
    base = LogCheck(tenant_id, report.receipts, len(checkpoints), head.head.hex())
    if head.size != len(leaves) or (leaves and leaves[-1] != head.head):
        return _failed(base, f"the log head (size {head.size}) is not the last stored receipt "
                             f"(seq {len(leaves)}): the next receipt would not chain to it")  # fmt: skip
    problem = _check_checkpoints(tenant_id, leaves, checkpoints, keyring)
    return base if problem is None else _failed(base, problem)


def _check_checkpoints(
    tenant_id: str, leaves: list[bytes], checkpoints: list[StoredCheckpoint], keyring: Keyring
) -> str | None:
    """Every stored checkpoint signed and committing to the stored receipts at its size."""
    frontier = MerkleFrontier()
    keys, origin = keyring.checkpoint_keys(), log_origin(tenant_id)
    for stored in checkpoints:
        size, root, note = stored.size, bytes(stored.root), stored.note
        try:
            signed = verify_checkpoint(note, keys, origin=origin)
        except VerificationError as exc:
            return f"checkpoint of size {size}: {exc}"
        if size > len(leaves):
            return f"checkpoint of size {size} commits to more receipts than the log holds"
        while frontier.size < size:
            frontier.append(leaves[frontier.size])
        if signed.size != size or signed.root != root or frontier.root() != root:
            return f"proof_invalid: checkpoint of size {size} does not commit to the stored log"
    return None


def _extends(check: LogCheck, leaves: list[bytes], size: int, head: str) -> LogCheck:
    """The log is the one the backup recorded, or has grown from it (a replica read later)."""
    if len(leaves) < size:
        return _failed(check, f"the backup recorded {size} receipts, the log holds {len(leaves)}")
    if size > 0 and leaves[size - 1].hex() != head:
        return _failed(check, f"receipt {size} is not the head the backup recorded ({head[:16]}…)")
    return check


def _failed(check: LogCheck, problem: str) -> LogCheck:
    return LogCheck(check.tenant_id, check.receipts, check.checkpoints, check.head, problem)
