"""The asynchronous client: `AsyncClient(key, base_url)`, the same methods as `Client`, awaited.

Kept method for method beside `gateway.client.sync` (the calls themselves are built once, in
`gateway.client.calls`; only sending differs)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import IO, Literal, TypeVar, Unpack

import httpx

from gateway.client import calls
from gateway.client.calls import Call, ReplayMode
from gateway.client.errors import ConnectionFailedError
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
from gateway.client.retrying import DEFAULT_RETRIES, Retries, wait_after_error, wait_after_status
from gateway.client.sync import DEFAULT_URL, client_headers, key_and_url, now
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

__all__ = ["AsyncClient"]

T = TypeVar("T")


class AsyncClient:
    """A gateway client for one key. Use it as a context manager, or call `close()`.

    `transport` swaps the network (an `httpx.MockTransport`, a fault injector); `sleep` is what
    waits between retries."""

    def __init__(
        self,
        key: str,
        base_url: str = DEFAULT_URL,
        *,
        timeout: float = 30.0,
        retries: Retries = DEFAULT_RETRIES,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=client_headers(key), timeout=timeout, transport=transport
        )
        self._retries = retries
        self._sleep = sleep

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> AsyncClient:
        """The key from `CTXGW_API_KEY`, the gateway from `CTXGW_URL` (default local)."""
        return cls(*key_and_url(environ))

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _exchange(self, call: Call[T], sink: ExportSink | None = None) -> T:
        attempt = 0
        while True:
            attempt += 1
            request = self._http.build_request(
                call.method,
                call.path,
                content=call.body,
                params=call.params,
                headers={"Content-Type": call.content_type, **dict(call.headers)},
            )
            try:
                response = await self._http.send(request, stream=True)
            except httpx.TransportError as exc:
                wait = wait_after_error(self._retries, attempt, exc, call.resendable)
                if wait is None:
                    raise ConnectionFailedError(f"{call.method} {call.path}: {exc}") from exc
                await self._sleep(wait)
                continue
            try:
                status = response.status_code
                wait = wait_after_status(
                    self._retries, attempt, status, response.headers.get("retry-after"), now()
                )
                if wait is None:
                    if sink is not None and status == 200:
                        async for chunk in response.aiter_bytes():
                            sink.write(chunk)
                        return calls.answer(call, status, "", b"")
                    body = await response.aread()
                    content_type = response.headers.get("content-type", "")
                    return calls.answer(call, status, content_type, body)
            except httpx.TransportError as exc:
                raise ConnectionFailedError(f"{call.method} {call.path}: {exc}") from exc
            finally:
                await response.aclose()
            await self._sleep(wait)

    async def health(self) -> Health:
        return await self._exchange(calls.health())

    async def ready(self) -> Readiness:
        return await self._exchange(calls.ready())

    async def write_memory(
        self, namespace: str, heading: str, content: str, **options: Unpack[MemoryOptions]
    ) -> Written:
        memory = NewMemory(namespace=namespace, heading=heading, content=content, **options)
        return await self._exchange(calls.write_memory(memory))

    async def write_batch(self, items: Sequence[NewMemory]) -> BatchWrite:
        return await self._exchange(calls.write_batch(items))

    async def delete_memory(self, memory_id: str, reason: str) -> Deleted:
        return await self._exchange(calls.delete_memory(memory_id, reason))

    async def context(self, task: str, **options: Unpack[ContextOptions]) -> ContextBundle:
        return await self._exchange(calls.context(task, options))

    async def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResults:
        return await self._exchange(calls.search(query, options))

    async def timeline(self, ids: Sequence[str], *, purpose: str | None = None) -> Timeline:
        return await self._exchange(calls.timeline(ids, purpose))

    async def fetch(self, ids: Sequence[str], *, purpose: str | None = None) -> FetchedMemories:
        return await self._exchange(calls.fetch(ids, purpose))

    async def compile(
        self,
        *,
        session_id: str | None = None,
        namespace: str | None = None,
        extractor: str | None = None,
    ) -> CompileResult:
        """Compile one scope now (a session's turns or a namespace's episodes) and wait."""
        return await self._exchange(calls.compile_now(session_id, namespace, extractor))

    async def compile_later(
        self,
        *,
        session_id: str | None = None,
        namespace: str | None = None,
        extractor: str | None = None,
    ) -> CompileAccepted:
        """Queue a compile for the gateway's workers; poll it with `compile_job`."""
        return await self._exchange(calls.compile_later(session_id, namespace, extractor))

    async def compile_job(self, job_id: str) -> CompileJob:
        return await self._exchange(calls.compile_job(job_id))

    async def conflicts(
        self,
        *,
        namespace: str | None = None,
        status: Literal["open", "all"] = "open",
        after: str | None = None,
        limit: int | None = None,
    ) -> ConflictPage:
        return await self._exchange(calls.conflicts(namespace, status, after, limit))

    async def resolve_conflict(self, conflict_id: str, winner: str, reason: str) -> ConflictEntry:
        return await self._exchange(calls.resolve_conflict(conflict_id, winner, reason))

    async def receipt(self, receipt_id: str) -> ReceiptDetail:
        return await self._exchange(calls.receipt(receipt_id))

    async def receipts(
        self,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        **filters: Unpack[ReceiptFilter],
    ) -> ReceiptPage:
        """One page; `next_cursor` names the next (None on the last)."""
        return await self._exchange(calls.receipts(filters, cursor, limit))

    async def iter_receipts(
        self, *, page_size: int = 100, **filters: Unpack[ReceiptFilter]
    ) -> AsyncIterator[ReceiptSummary]:
        """Every receipt the filters match, in log order, a page at a time."""
        cursor: str | None = None
        while True:
            page = await self.receipts(cursor=cursor, limit=page_size, **filters)
            for summary in page.receipts:
                yield summary
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def verify_receipt(self, receipt_id: str) -> Verification:
        return await self._exchange(calls.verify_receipt(receipt_id))

    async def receipt_proof(self, receipt_id: str) -> InclusionProof:
        return await self._exchange(calls.receipt_proof(receipt_id))

    async def checkpoint(self) -> str:
        return await self._exchange(calls.checkpoint())

    async def export_receipts(
        self, destination: str | os.PathLike[str] | IO[bytes], **filters: Unpack[ReceiptFilter]
    ) -> Exported:
        """Stream the log (JSONL, verifiable offline) into a file without holding it in memory.
        A path is written whole or not at all (a temporary file renamed at the end)."""
        with ExportSink.open(destination) as sink:
            await self._exchange(calls.export(filters), sink)
            return sink.finish()

    async def replay(
        self,
        receipt_id: str,
        mode: ReplayMode = "exact",
        *,
        policy_digest: str | None = None,
        policy_yaml: str | None = None,
    ) -> ContextReplay | RefusalReplay:
        return await self._exchange(calls.replay(receipt_id, mode, policy_digest, policy_yaml))

    async def upload_policy(
        self, source: str | bytes, *, filename: str = "policy.yaml"
    ) -> PolicyUploaded:
        return await self._exchange(calls.upload_policy(source, filename))

    async def activate_policy(self, digest: str, mode: Literal["enforce", "log_only"]) -> Activated:
        return await self._exchange(calls.activate_policy(digest, mode))

    async def active_policy(self) -> ActivePolicy:
        return await self._exchange(calls.active_policy())

    async def policy(self, digest: str) -> StoredPolicy:
        return await self._exchange(calls.policy(digest))

    async def what_if(self, **options: Unpack[WhatIfOptions]) -> WhatIfReport:
        return await self._exchange(calls.what_if(options))

    async def create_session(
        self, namespace: str, task: str, **options: Unpack[SessionOptions]
    ) -> SessionInfo:
        return await self._exchange(calls.create_session(namespace, task, options))

    async def append_turns(
        self, session_id: str, turns: Sequence[NewTurn], *, idempotency_key: str | None = None
    ) -> Appended:
        """Append up to 100 turns in order; retried with the same idempotency key."""
        return await self._exchange(calls.append_turns(session_id, turns, idempotency_key))

    async def session_context(
        self, session_id: str, **options: Unpack[SessionContextOptions]
    ) -> SessionContext:
        return await self._exchange(calls.session_context(session_id, options))

    async def session(self, session_id: str) -> SessionInfo:
        return await self._exchange(calls.session(session_id))

    async def history(
        self,
        session_id: str,
        *,
        after: int = 0,
        limit: int | None = None,
        purpose: str | None = None,
    ) -> HistoryPage:
        """One page of the history after turn `after`; `next_after` names the next."""
        return await self._exchange(calls.history(session_id, after, limit, purpose))

    async def iter_history(
        self, session_id: str, *, page_size: int = 100, purpose: str | None = None
    ) -> AsyncIterator[HistoryTurn]:
        """Every turn the key may see, in order, a page (and a receipt) at a time."""
        after: int | None = 0
        while after is not None:
            page = await self.history(session_id, after=after, limit=page_size, purpose=purpose)
            for turn in page.turns:
                yield turn
            after = page.next_after
