"""Writing, retiring and fetching memory versions.

A write may retire only what its writer may see (`gateway.usecases.access.sight`): a memory
outside its namespaces or denied it by the policy in force is, to it, a memory that does not
exist (404 for `supersedes` and for a delete, as for an unknown id), and supersession by claim
key or likeness leaves such a memory live (`gateway.usecases.memories.supersession`).

Idempotency keys are scoped by namespace: a key answers for the writes made with it in the
namespace written to, so a key used where the writer may not read tells it nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime

from gateway.core.model import ExclusionReason
from gateway.core.supersession import Claimant, Decision
from gateway.core.tokens import Tokenizer
from gateway.domain.clock import Clock, IdFactory
from gateway.domain.errors import ConflictError, ForbiddenError, NotFoundError
from gateway.domain.memory import MemoryDraft, MemoryVersion
from gateway.domain.principal import Principal
from gateway.embedding import Embedder
from gateway.responses.memories import BatchItem, BatchWrite, Deleted, Written
from gateway.store import memories as store
from gateway.store import supersessions as supersession_store
from gateway.store.database import Connection as Conn
from gateway.store.pool import Pool
from gateway.usecases.access.policy import PolicyRegistry
from gateway.usecases.access.sight import Sight, sight_of
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.memories.supersession import Settled, Superseder
from gateway.usecases.receiptlog.recorder import rfc3339

__all__ = [
    "WriteOutcome",
    "Writer",
    "delete_memory",
    "memory_text",
    "withheld_reason",
    "write_batch",
    "write_memory",
]


def memory_text(heading: str, content: str) -> str:
    """The text a memory is embedded and counted as."""
    return f"{heading}\n{content}"


def _request_sha256(draft: MemoryDraft) -> str:
    # What an idempotent retry must repeat exactly; a reused key with other content is a conflict.
    payload = asdict(draft)
    payload["expires_at"] = draft.expires_at.isoformat() if draft.expires_at else None
    # Provenance enters the hash only when present, so plain writes hash as they always did.
    for name in ("sources", "extractor", "valid_from", "claim_value", "claim_previous"):
        if not payload[name]:
            del payload[name]
    if draft.valid_from is not None:
        payload["valid_from"] = draft.valid_from.isoformat()
    encoded = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    memory_id: str
    created: bool  # False when an idempotent retry returned the earlier write
    supersedes: str | None
    created_at: datetime | None = None
    settled: Settled = field(default_factory=Settled)  # what it superseded by claim or likeness


def _retried(
    earlier: store.IdempotentWrite, draft: MemoryDraft, request_sha256: str
) -> WriteOutcome | ConflictError:
    """The answer to a retry of an earlier write under the same idempotency key; a conflict when
    the retry asks for something else."""
    if earlier.request_sha256 != request_sha256:
        return ConflictError(
            "idempotency_key was already used for a different memory",
            code="idempotency_conflict",
        )
    return WriteOutcome(earlier.memory_id, False, draft.supersedes)


def _settles(draft: MemoryDraft) -> bool:
    """Whether a draft competes with live facts (ARCHITECTURE §12): a claim key, or a compiled
    fact (similarity, or a change naming the value it replaced). A compiled episode (a session's
    digest) records what happened and competes with nothing."""
    compiled_fact = draft.extractor is not None and draft.memory_type != "episodic"
    return draft.claim_key is not None or compiled_fact or bool(draft.claim_previous)


@dataclass(frozen=True, slots=True)
class Writer:
    """Everything a write needs besides the connection; built once per process."""

    embedder: Embedder
    tokenizer: Tokenizer
    clock: Clock
    new_id: IdFactory
    superseder: Superseder
    job_id: str | None = None  # the compile job writing, named by the decisions it brings about
    # The policy in force judges what a write may retire (the disclosures' registry, shared).
    policies: PolicyRegistry = field(default_factory=PolicyRegistry)

    async def write(
        self, conn: Conn, principal: Principal, drafts: Sequence[MemoryDraft]
    ) -> list[WriteOutcome | ConflictError | NotFoundError | ForbiddenError]:
        """Write drafts in order inside the caller's transaction.

        A draft that cannot be written (retired or unknown `supersedes`, a reused idempotency
        key) yields its error in place and leaves nothing behind; the others are written. The
        round trips do not grow with the batch: the earlier writes of every idempotency key are
        read in one statement, and each run of drafts that supersede nothing is inserted in one
        pipelined round trip (they can fail only by their key, decided before). A draft that
        supersedes locks and retires its predecessor in a savepoint of its own, in its place.
        """
        principal.require_role("agent", "admin")
        for index, draft in enumerate(drafts):
            field = f"items/{index}/namespace" if len(drafts) > 1 else "namespace"
            principal.require_namespace(draft.namespace, field)
        texts = [memory_text(d.heading, d.content) for d in drafts]
        measured = await asyncio.to_thread(self._measure, drafts, texts)
        claiming = [d.namespace for d in drafts if _settles(d)]
        await supersession_store.lock_namespaces(conn, principal.tenant_id, claiming)
        keys = [(d.namespace, d.idempotency_key) for d in drafts if d.idempotency_key is not None]
        earlier = await store.find_idempotent_writes(conn, principal.tenant_id, keys)
        retiring = [d.namespace for d in drafts if d.supersedes is not None or _settles(d)]
        sight = await self._sight(conn, principal, retiring)
        results: list[WriteOutcome | ConflictError | NotFoundError | ForbiddenError] = []
        run: list[store.NewVersion] = []  # drafts that supersede nothing, inserted together
        for draft, (heading_tokens, tokens, vector) in zip(drafts, measured, strict=True):
            request_sha256 = _request_sha256(draft)
            key = (
                None if draft.idempotency_key is None else (draft.namespace, draft.idempotency_key)
            )
            if key is not None and key in earlier:
                results.append(_retried(earlier[key], draft, request_sha256))
                continue
            now = self.clock()
            version = store.NewVersion(
                tenant_id=principal.tenant_id,
                memory_id=self.new_id(now),
                draft=draft,
                agent_id=principal.agent_id,
                written_by_key=principal.key_id,
                request_sha256=request_sha256,
                created_at=now,
                content_sha256=hashlib.sha256(draft.content.encode("utf-8")).hexdigest(),
                heading_tokens=heading_tokens,
                tokens=tokens,
                embedding=vector,
                embedding_model=self.embedder.model,
                embedding_dim=self.embedder.dim,
            )
            if key is not None:  # a later draft with this key (in this namespace) retries it
                earlier[key] = store.IdempotentWrite(version.memory_id, request_sha256)
            if draft.supersedes is None and not _settles(draft):
                results.append(WriteOutcome(version.memory_id, True, None, now))
                run.append(version)
                continue
            await self._insert(conn, run, results)
            run = []
            try:
                async with conn.transaction():
                    results.append(await self._supersede(conn, principal, version, sight))
            except (ConflictError, NotFoundError, ForbiddenError) as error:
                results.append(error)
                if key is not None:
                    del earlier[key]  # nothing was written under it
        await self._insert(conn, run, results)
        return results

    async def _sight(self, conn: Conn, principal: Principal, namespaces: Sequence[str]) -> Sight:
        """What the writer may see, asked only of a write that may retire something."""
        if not namespaces:
            return Sight(principal)
        namespaces = sorted(set(namespaces))
        return await sight_of(conn, self.policies, principal, self.clock(), namespaces=namespaces)

    def _measure(
        self, drafts: Sequence[MemoryDraft], texts: Sequence[str]
    ) -> list[tuple[int, int, list[float]]]:
        """Token counts (heading, whole text) and embedding of every draft, in bulk: one call
        to the embedder, all of it off the event loop."""
        vectors = self.embedder.embed(list(texts))
        return [
            (self.tokenizer.count(d.heading), self.tokenizer.count(t), v)
            for d, t, v in zip(drafts, texts, vectors, strict=True)
        ]

    async def _insert(
        self,
        conn: Conn,
        run: Sequence[store.NewVersion],
        results: list[WriteOutcome | ConflictError | NotFoundError | ForbiddenError],
    ) -> None:
        """Insert a run of versions whose outcomes `results` already holds. A key another
        request took meanwhile (the insert's ON CONFLICT skipped the row) gets that request's
        answer in place of its own."""
        raced = await store.insert_versions(conn, run)
        for version in raced:
            assert version.draft.idempotency_key is not None
            winner = await store.find_idempotent_write(
                conn, version.tenant_id, version.draft.namespace, version.draft.idempotency_key
            )
            if winner is None:  # pragma: no cover - the conflicting row must exist
                raise ConflictError("idempotency key in use", code="idempotency_conflict")
            position = next(
                i
                for i, r in enumerate(results)
                if isinstance(r, WriteOutcome) and r.memory_id == version.memory_id
            )
            results[position] = _retried(winner, version.draft, version.request_sha256)

    async def _supersede(
        self, conn: Conn, principal: Principal, version: store.NewVersion, sight: Sight
    ) -> WriteOutcome:
        """A version that supersedes one (`supersedes`) or competes for a claim (a claim key, a
        compiled fact): inserted alone, then every supersession decision it brings about among
        the versions its writer may see (`sight`)."""
        draft = version.draft
        if draft.supersedes is not None:
            await _check_retirable(conn, sight, draft.supersedes, superseding=True)
        if await store.insert_versions(conn, [version]):  # skipped: its key was taken
            # A concurrent request with the same idempotency key won the race; answer as it did.
            assert draft.idempotency_key is not None
            winner = await store.find_idempotent_write(
                conn, version.tenant_id, draft.namespace, draft.idempotency_key
            )
            if winner is None:  # pragma: no cover - the conflicting row must exist
                raise ConflictError("idempotency key in use", code="idempotency_conflict")
            outcome = _retried(winner, draft, version.request_sha256)
            if isinstance(outcome, ConflictError):
                raise outcome
            return outcome
        now = version.created_at
        if draft.supersedes is not None:
            explicit = Decision(draft.supersedes, version.memory_id, "explicit", draft.claim_key)
            await self.superseder.record(
                conn, principal.tenant_id, draft.namespace, explicit, now, self.job_id
            )
        settled = Settled()
        if _settles(draft):
            new = Claimant(
                memory_id=version.memory_id,
                memory_type=draft.memory_type,
                text=memory_text(draft.heading, draft.content),
                claim_key=draft.claim_key,
                valid_from=draft.valid_from,
                created_at=now,
                content_sha256=version.content_sha256,
                value=draft.claim_value,
                previous=draft.claim_previous,
            )
            settled = await self.superseder.settle(
                conn,
                principal.tenant_id,
                draft.namespace,
                new,
                compiled=draft.extractor is not None,
                at=now,
                job_id=self.job_id,
                sight=sight,
            )
        return WriteOutcome(version.memory_id, True, draft.supersedes, now, settled)


async def _check_retirable(
    conn: Conn, sight: Sight, memory_id: str, *, superseding: bool = False
) -> None:
    """Lock a live version its writer may see for retirement (by a new version superseding it,
    else by deletion); 404 when it may not see it (as for an unknown id), 409 when it is retired
    already (naming the newer version only when the writer may see that one too)."""
    principal = sight.principal
    field = "supersedes: " if superseding else ""
    state = await store.lock_for_retire(conn, principal.tenant_id, memory_id)
    if (
        state is None
        or not principal.may_use(state.namespace)
        or await sight.hidden_ids(conn, [memory_id])
    ):
        raise NotFoundError(f"{field}memory {memory_id} not found")
    if state.superseded_by is not None:
        newer = state.superseded_by
        by = "" if await sight.hidden_ids(conn, [newer]) else f" by {newer}"
        raise ConflictError(
            f"supersedes: memory {memory_id} was already superseded{by}; supersede the newest "
            "version"
            if superseding
            else f"memory {memory_id} was superseded{by}; delete the newest version",
            code="already_superseded",
        )
    if state.deleted_at is not None:
        raise ConflictError(
            f"supersedes: memory {memory_id} is deleted"
            if superseding
            else f"memory {memory_id} is already deleted",
            code="memory_deleted",
        )


async def write_memory(
    pool: Pool, writer: Writer, authorization: str | None, draft: MemoryDraft
) -> Written:
    """Write one memory in its own unit of work; its error (403, 404, 409) is the request's."""
    async with unit_of_work(pool, authorization, writes=1) as (conn, principal):
        [result] = await writer.write(conn, principal, [draft])
    if isinstance(result, Exception):
        raise result
    return Written(result.memory_id, result.created, result.supersedes)


# Per-item statuses of a batch: the body reports each item as its own request would have been.
_ITEM_STATUS: dict[type[Exception], int] = {
    ForbiddenError: 403,
    NotFoundError: 404,
    ConflictError: 409,
}


async def write_batch(
    pool: Pool, writer: Writer, authorization: str | None, drafts: Sequence[MemoryDraft]
) -> BatchWrite:
    """Write drafts in order in one unit of work; an item the state does not allow is reported
    in place and leaves nothing behind, the others are written."""
    async with unit_of_work(pool, authorization, writes=len(drafts)) as (conn, principal):
        results = await writer.write(conn, principal, drafts)
    items: list[BatchItem] = []
    for index, result in enumerate(results):
        if isinstance(result, Exception):
            status = next(s for t, s in _ITEM_STATUS.items() if isinstance(result, t))
            items.append(BatchItem(index, status, code=result.code, detail=result.detail))
        else:
            items.append(
                BatchItem(
                    index,
                    201 if result.created else 200,
                    memory_id=result.memory_id,
                    created=result.created,
                    supersedes=result.supersedes,
                )
            )
    written = sum(item.status in (200, 201) for item in items)
    return BatchWrite(items=items, written=written, failed=len(items) - written)


async def delete_memory(
    pool: Pool,
    policies: PolicyRegistry,
    authorization: str | None,
    memory_id: str,
    reason: str,
    at: datetime,
) -> Deleted:
    """Soft-delete one live version its caller may see; the row stays for audit and replay."""
    async with unit_of_work(pool, authorization, writes=1) as (conn, principal):
        principal.require_role("agent", "admin")
        sight = await sight_of(conn, policies, principal, at)
        await _check_retirable(conn, sight, memory_id)
        await store.retire(conn, principal.tenant_id, memory_id, at=at, reason=reason)
    return Deleted(memory_id=memory_id, deleted_at=rfc3339(at), reason=reason)


def withheld_reason(version: MemoryVersion, now: datetime) -> ExclusionReason | None:
    """Why a version may not reach an agent at `now`, or None when it is live."""
    if version.erased_at is not None:
        return "deleted"
    if version.deleted_at is not None and version.deleted_at <= now:
        return "superseded" if version.superseded_by is not None else "deleted"
    if version.expires_at is not None and version.expires_at <= now:
        return "expired"
    return None
