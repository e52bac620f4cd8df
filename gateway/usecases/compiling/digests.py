"""A compiled session's digest (ARCHITECTURE §12): one episodic memory retelling the session,
folded chunk by chunk as compile reads its turns, each version superseding the one before."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from gateway.core.digest import DIGEST, DigestTurn, fold_digest, parse_digest
from gateway.core.tokens import load_tokenizer
from gateway.domain.memory import MemoryDraft
from gateway.domain.principal import Principal
from gateway.store import compile_inputs
from gateway.store import compiling as store
from gateway.store.database import Connection
from gateway.usecases.compiling import provenance
from gateway.usecases.memories.writer import Writer

__all__ = ["write_digest"]

_TOKENIZER = load_tokenizer()  # the summarizer's, for a digest's share


async def write_digest(
    conn: Connection,
    writer: Writer,
    principal: Principal,
    job: store.JobRow,
    rows: Sequence[compile_inputs.EpisodeRow],
    tellable: Sequence[compile_inputs.EpisodeRow],
) -> None:
    """Fold this chunk's turns (`rows`) into the session's digest: a new version superseding the
    live one, its sources the one before and the turns it retells (erasing a turn erases every
    digest since, through them), its labels theirs. It retells only the `tellable` turns (those
    the requester may see, not erased), and is written after the chunk's facts: a turn they
    retired as stating a superseded value is not retold. The same turns through the same
    versions give the same idempotency key, so a second or concurrent compile of them writes no
    copy."""
    assert job.session_id is not None
    name = f"{DIGEST[0]}/{DIGEST[1]}"
    previous = await compile_inputs.live_digest(
        conn, job.tenant_id, job.namespace, job.session_id, name
    )
    remembered = [r.memory_id for r in tellable if r.memory_id is not None]
    retired = await compile_inputs.retired_among(conn, job.tenant_id, remembered)
    told = [r for r in tellable if r.memory_id not in retired or r.memory_id is None]
    if not told and previous is None:
        return  # nothing of the session is left to tell
    digest = fold_digest(
        parse_digest(previous.content) if previous else None,
        [DigestTurn(r.seq, r.role, r.content, r.occurred_at.date()) for r in told],
        _TOKENIZER,
        covered=len(rows),
    )
    identity = json.dumps([name, job.extractor, job.namespace, job.session_id, rows[-1].seq])
    ids = [i for r in told for i in (r.turn_id, r.memory_id) if i is not None]
    labels = provenance.labels_by_source(told)
    if previous is not None:
        labels[previous.memory_id] = tuple(previous.labels)
    sources = tuple([previous.memory_id] if previous else []) + tuple(ids)
    draft = MemoryDraft(
        namespace=job.namespace,
        memory_type="episodic",
        heading=digest.heading,
        content=digest.content,
        confidence=0.8,
        labels=provenance.inherited(sources, labels),
        source_type="compile",
        source_ref=job.session_id,
        supersedes=previous.memory_id if previous else None,
        idempotency_key="digest:" + hashlib.sha256(identity.encode("utf-8")).hexdigest(),
        sources=sources,
        extractor=name,
        # An account of the session from its start: a digest stating a value later superseded
        # is retired with the turns that stated it (rule `value`).
        valid_from=previous.valid_from if previous and previous.valid_from else rows[0].occurred_at,
    )
    [result] = await writer.write(conn, principal, [draft])
    if isinstance(result, Exception):
        raise result
