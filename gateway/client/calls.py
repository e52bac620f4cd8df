"""Every v1 endpoint, written once, as a `Call`: what to send and how to read the answer, no I/O.

Each function here takes the arguments of its client method (`gateway.client.endpoints` makes
it a method of both clients) and says what to send; `Client` and `AsyncClient` only send it.
Response bodies decode into the gateway's own response Structs (`gateway.responses`, which import
only msgspec), so the client cannot drift from what the gateway sends.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from typing import IO, Any, Literal, NoReturn, Unpack

import msgspec

from gateway.client.call import (
    Call,
    Page,
    as_text,
    decoder,
    json_body,
    maybe,
    query_params,
    segment,
)
from gateway.client.export import Exported, ExportSink
from gateway.client.options import (
    ContextOptions,
    MemoryOptions,
    NewMemory,
    NewTurn,
    ReceiptFilter,
    SearchOptions,
    SessionContextOptions,
    SessionOptions,
    WhatIfOptions,
)
from gateway.responses.compiling import (
    CompileAccepted,
    CompileJob,
    CompileResult,
    ConflictEntry,
    ConflictPage,
)
from gateway.responses.disclosures import (
    ContextBundle,
    ContextReplay,
    FetchedMemories,
    RefusalReplay,
    SearchResults,
    Timeline,
)
from gateway.responses.health import Health, Readiness
from gateway.responses.memories import BatchWrite, Deleted, Written
from gateway.responses.policies import (
    Activated,
    ActivePolicy,
    PolicyUploaded,
    StoredPolicy,
    WhatIfReport,
)
from gateway.responses.receipts import (
    InclusionProof,
    ReceiptDetail,
    ReceiptPage,
    ReceiptSummary,
    Verification,
)
from gateway.responses.sessions import (
    Appended,
    HistoryPage,
    HistoryTurn,
    SessionContext,
    SessionInfo,
)

__all__ = ["new_idempotency_key"]

ReplayMode = Literal["exact", "current", "what_if"]


def new_idempotency_key() -> str:
    return f"ctxgw-client-{uuid.uuid4().hex}"


def health() -> Call[Health]:
    return Call("GET", "/healthz", decoder(Health), resendable=True)


def ready() -> Call[Readiness]:
    return Call("GET", "/readyz", decoder(Readiness), resendable=True)


def _keyed(memory: NewMemory) -> NewMemory:
    if memory.idempotency_key is not None:
        return memory
    return msgspec.structs.replace(memory, idempotency_key=new_idempotency_key())


def write_memory(
    namespace: str, heading: str, content: str, **options: Unpack[MemoryOptions]
) -> Call[Written]:
    memory = NewMemory(namespace=namespace, heading=heading, content=content, **options)
    body = msgspec.json.encode(_keyed(memory))
    return Call("POST", "/v1/memories", decoder(Written), resendable=True, body=body)


def write_batch(items: Sequence[NewMemory]) -> Call[BatchWrite]:
    body = msgspec.json.encode({"items": [_keyed(item) for item in items]})
    return Call("POST", "/v1/memories/batch", decoder(BatchWrite), resendable=True, body=body)


def delete_memory(memory_id: str, reason: str) -> Call[Deleted]:
    # Not resendable: a second delete of a deleted memory is 409, not the first answer again.
    path = f"/v1/memories/{segment(memory_id)}"
    body = json_body({"reason": reason})
    return Call("DELETE", path, decoder(Deleted), resendable=False, body=body)


# Disclosures are not resent after a lost answer: each one is receipted, and a second receipt
# for one question would tell an auditor the agent asked twice.
def context(task: str, **options: Unpack[ContextOptions]) -> Call[ContextBundle]:
    body = json_body({"task": task, **options})
    return Call("POST", "/v1/context", decoder(ContextBundle), resendable=False, body=body)


def search(query: str, **options: Unpack[SearchOptions]) -> Call[SearchResults]:
    body = json_body({"query": query, **options})
    return Call("POST", "/v1/search", decoder(SearchResults), resendable=False, body=body)


def timeline(ids: Sequence[str], *, purpose: str | None = None) -> Call[Timeline]:
    body = json_body({"ids": list(ids), "purpose": purpose})
    return Call("POST", "/v1/timeline", decoder(Timeline), resendable=False, body=body)


def fetch(ids: Sequence[str], *, purpose: str | None = None) -> Call[FetchedMemories]:
    body = json_body({"ids": list(ids), "purpose": purpose})
    return Call("POST", "/v1/fetch", decoder(FetchedMemories), resendable=False, body=body)


def fetch_claims(
    namespace: str, claim_keys: Sequence[str], *, purpose: str | None = None
) -> Call[FetchedMemories]:
    """The live memories of `namespace` holding any of `claim_keys` (at most 50), newest first
    for each: a fetch by claim instead of by id, judged and receipted as a fetch."""
    body = json_body({"namespace": namespace, "claim_keys": list(claim_keys), "purpose": purpose})
    return Call("POST", "/v1/fetch/claims", decoder(FetchedMemories), resendable=False, body=body)


def receipt(receipt_id: str) -> Call[ReceiptDetail]:
    path = f"/v1/receipts/{segment(receipt_id)}"
    return Call("GET", path, decoder(ReceiptDetail), resendable=True)


def receipts(
    *, cursor: str | None = None, limit: int | None = None, **filters: Unpack[ReceiptFilter]
) -> Call[ReceiptPage]:
    """One page; `next_cursor` names the next (None on the last)."""
    params = query_params({**filters, "cursor": cursor, "limit": limit})
    return Call("GET", "/v1/receipts", decoder(ReceiptPage), resendable=True, params=params)


def iter_receipts(
    *, page_size: int = 100, **filters: Unpack[ReceiptFilter]
) -> Call[Page[ReceiptSummary]]:
    """Every receipt the filters match, in log order, a page at a time."""

    def at(cursor: str | None) -> Call[Page[ReceiptSummary]]:
        call = receipts(cursor=cursor, limit=page_size, **filters)
        return call.then(lambda page: Page(page.receipts, maybe(page.next_cursor, at)))

    return at(None)


def verify_receipt(receipt_id: str) -> Call[Verification]:
    path = f"/v1/receipts/{segment(receipt_id)}/verify"
    return Call("GET", path, decoder(Verification), resendable=True)


def receipt_proof(receipt_id: str) -> Call[InclusionProof]:
    path = f"/v1/receipts/{segment(receipt_id)}/proof"
    return Call("GET", path, decoder(InclusionProof), resendable=True)


def checkpoint() -> Call[str]:
    return Call("GET", "/v1/log/checkpoint", as_text, resendable=True)


def _streamed(body: bytes) -> NoReturn:
    raise AssertionError("a streamed body is never read whole")


def export_receipts(
    destination: str | os.PathLike[str] | IO[bytes], **filters: Unpack[ReceiptFilter]
) -> Call[Exported]:
    """Stream the log (JSONL, verifiable offline) into a file without holding it in memory.
    A path is written whole or not at all (a temporary file renamed at the end)."""
    return Call(
        "GET", "/v1/receipts/export", _streamed, resendable=True, params=query_params(filters),
        stream=lambda: ExportSink.open(destination),
    )  # fmt: skip


_REPLAY = msgspec.json.Decoder(dict[str, Any])


def _replay(body: bytes) -> ContextReplay | RefusalReplay:
    # Two untagged Structs: a refusal's replay is the one that says what became of its bundle.
    members = _REPLAY.decode(body)
    kind: type[ContextReplay | RefusalReplay] = (
        RefusalReplay if "bundle" in members else ContextReplay
    )
    return msgspec.convert(members, kind)


def replay(
    receipt_id: str,
    mode: ReplayMode = "exact",
    *,
    policy_digest: str | None = None,
    policy_yaml: str | None = None,
) -> Call[ContextReplay | RefusalReplay]:
    path = f"/v1/receipts/{segment(receipt_id)}/replay"
    body = json_body({"mode": mode, "policy_digest": policy_digest, "policy_yaml": policy_yaml})
    return Call("POST", path, _replay, resendable=False, body=body)


def upload_policy(source: str | bytes, *, filename: str = "policy.yaml") -> Call[PolicyUploaded]:
    # Bundles are stored by digest: uploading the same meaning twice stores it once.
    content = source.encode("utf-8") if isinstance(source, str) else source
    return Call(
        "POST",
        "/v1/policies",
        decoder(PolicyUploaded),
        resendable=True,
        body=content,
        content_type="application/yaml",
        headers=(("X-Policy-Filename", filename),),
    )


def activate_policy(digest: str, mode: Literal["enforce", "log_only"]) -> Call[Activated]:
    path = f"/v1/policies/{segment(digest)}/activate"
    return Call("POST", path, decoder(Activated), resendable=True, body=json_body({"mode": mode}))


def active_policy() -> Call[ActivePolicy]:
    return Call("GET", "/v1/policies/active", decoder(ActivePolicy), resendable=True)


def policy(digest: str) -> Call[StoredPolicy]:
    path = f"/v1/policies/{segment(digest)}"
    return Call("GET", path, decoder(StoredPolicy), resendable=True)


def what_if(**options: Unpack[WhatIfOptions]) -> Call[WhatIfReport]:
    body = json_body(options)
    return Call("POST", "/v1/policies/what-if", decoder(WhatIfReport), resendable=False, body=body)


def create_session(
    namespace: str, task: str, **options: Unpack[SessionOptions]
) -> Call[SessionInfo]:
    members = {"idempotency_key": new_idempotency_key(), **options}
    body = json_body({"namespace": namespace, "task": task, **members})
    return Call("POST", "/v1/sessions", decoder(SessionInfo), resendable=True, body=body)


def append_turns(
    session_id: str, turns: Sequence[NewTurn], *, idempotency_key: str | None = None
) -> Call[Appended]:
    """Append up to 100 turns in order; retried with the same idempotency key."""
    # Keyed, so that a retried append is never the same turns twice in the history.
    path = f"/v1/sessions/{segment(session_id)}/turns"
    body = msgspec.json.encode(
        {"turns": list(turns), "idempotency_key": idempotency_key or new_idempotency_key()}
    )
    return Call("POST", path, decoder(Appended), resendable=True, body=body)


def session_context(
    session_id: str, **options: Unpack[SessionContextOptions]
) -> Call[SessionContext]:
    path = f"/v1/sessions/{segment(session_id)}/context"
    return Call("POST", path, decoder(SessionContext), resendable=False, body=json_body(options))


def session(session_id: str) -> Call[SessionInfo]:
    path = f"/v1/sessions/{segment(session_id)}"
    return Call("GET", path, decoder(SessionInfo), resendable=True)


def history(
    session_id: str, *, after: int = 0, limit: int | None = None, purpose: str | None = None
) -> Call[HistoryPage]:
    """One page of the history after turn `after`; `next_after` names the next."""
    # A page of history is receipted like any disclosure: not resent after a lost answer.
    path = f"/v1/sessions/{segment(session_id)}/turns"
    params = query_params({"after": after, "limit": limit, "purpose": purpose})
    return Call("GET", path, decoder(HistoryPage), resendable=False, params=params)


def iter_history(
    session_id: str, *, page_size: int = 100, purpose: str | None = None
) -> Call[Page[HistoryTurn]]:
    """Every turn the key may see, in order, a page (and a receipt) at a time."""

    def at(after: int) -> Call[Page[HistoryTurn]]:
        call = history(session_id, after=after, limit=page_size, purpose=purpose)
        return call.then(lambda page: Page(page.turns, maybe(page.next_after, at)))

    return at(0)


def _compile_scope(session_id: str | None, namespace: str | None) -> dict[str, Any]:
    if (session_id is None) == (namespace is None):
        raise ValueError("compile exactly one scope: session_id or namespace")
    return {"session_id": session_id, "namespace": namespace}


# A compile may be resent: compiling the same episodes again writes nothing new.
class _Compiled(msgspec.Struct):
    """A synchronous compile's answer: the finished job (200), or the job queued (202) when its
    scope holds more episodes than one request compiles, without counts yet."""

    job_id: str
    status: str
    created: int = 0
    superseded: int = 0
    conflicts: int = 0
    skipped: int = 0
    error: str | None = None


def _compiled(body: bytes) -> CompileResult:
    answer = msgspec.json.decode(body, type=_Compiled)
    return CompileResult(**msgspec.structs.asdict(answer))


def compile_now(
    *, session_id: str | None = None, namespace: str | None = None, extractor: str | None = None
) -> Call[CompileResult]:
    """Compile one scope now (a session's turns or a namespace's episodes) and wait; a scope
    too large for one request is queued instead (status `pending`): poll `compile_job`."""
    body = json_body({**_compile_scope(session_id, namespace), "extractor": extractor})
    return Call("POST", "/v1/compile", _compiled, resendable=True, body=body)


def compile_later(
    *, session_id: str | None = None, namespace: str | None = None, extractor: str | None = None
) -> Call[CompileAccepted]:
    """Queue a compile for the gateway's workers; poll it with `compile_job`."""
    scope = _compile_scope(session_id, namespace)
    body = json_body({**scope, "extractor": extractor, "async": True})
    return Call("POST", "/v1/compile", decoder(CompileAccepted), resendable=True, body=body)


def compile_job(job_id: str) -> Call[CompileJob]:
    path = f"/v1/compile/{segment(job_id)}"
    return Call("GET", path, decoder(CompileJob), resendable=True)


def conflicts(
    *,
    namespace: str | None = None,
    status: Literal["open", "all"] = "open",
    after: str | None = None,
    limit: int | None = None,
) -> Call[ConflictPage]:
    params = query_params(
        {"namespace": namespace, "status": status, "after": after, "limit": limit}
    )
    return Call("GET", "/v1/conflicts", decoder(ConflictPage), resendable=True, params=params)


def resolve_conflict(conflict_id: str, winner: str, reason: str) -> Call[ConflictEntry]:
    # Not resendable: a second resolution of a resolved conflict is 409.
    path = f"/v1/conflicts/{segment(conflict_id)}/resolve"
    body = json_body({"winner": winner, "reason": reason})
    return Call("POST", path, decoder(ConflictEntry), resendable=False, body=body)
