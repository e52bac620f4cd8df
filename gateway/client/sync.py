"""The synchronous client: `Client(key, base_url)`; every v1 endpoint is one method."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import IO, Literal, TypeVar, Unpack

import httpx

from gateway import __version__
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

__all__ = ["DEFAULT_URL", "Client", "client_headers", "key_and_url", "now"]

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8080"


def key_and_url(environ: Mapping[str, str]) -> tuple[str, str]:
    key = environ.get("CTXGW_API_KEY", "")
    if not key:
        raise ValueError("CTXGW_API_KEY is not set: the client needs an API key")
    return key, environ.get("CTXGW_URL") or DEFAULT_URL


def client_headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "User-Agent": f"ctxgw-client/{__version__}"}


class Client:
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
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url, headers=client_headers(key), timeout=timeout, transport=transport
        )
        self._retries = retries
        self._sleep = sleep

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Client:
        """The key from `CTXGW_API_KEY`, the gateway from `CTXGW_URL` (default local)."""
        return cls(*key_and_url(environ))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _exchange(self, call: Call[T], sink: ExportSink | None = None) -> T:
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
                response = self._http.send(request, stream=True)
            except httpx.TransportError as exc:
                wait = wait_after_error(self._retries, attempt, exc, call.resendable)
                if wait is None:
                    raise ConnectionFailedError(f"{call.method} {call.path}: {exc}") from exc
                self._sleep(wait)
                continue
            try:
                status = response.status_code
                wait = wait_after_status(
                    self._retries, attempt, status, response.headers.get("retry-after"), now()
                )
                if wait is None:
                    if sink is not None and status == 200:
                        for chunk in response.iter_bytes():
                            sink.write(chunk)
                        return calls.answer(call, status, "", b"")
                    body = response.read()
                    content_type = response.headers.get("content-type", "")
                    return calls.answer(call, status, content_type, body)
            except httpx.TransportError as exc:
                raise ConnectionFailedError(f"{call.method} {call.path}: {exc}") from exc
            finally:
                response.close()
            self._sleep(wait)

    def health(self) -> Health:
        return self._exchange(calls.health())

    def ready(self) -> Readiness:
        return self._exchange(calls.ready())

    def write_memory(
        self, namespace: str, heading: str, content: str, **options: Unpack[MemoryOptions]
    ) -> Written:
        memory = NewMemory(namespace=namespace, heading=heading, content=content, **options)
        return self._exchange(calls.write_memory(memory))

    def write_batch(self, items: Sequence[NewMemory]) -> BatchWrite:
        return self._exchange(calls.write_batch(items))

    def delete_memory(self, memory_id: str, reason: str) -> Deleted:
        return self._exchange(calls.delete_memory(memory_id, reason))

    def context(self, task: str, **options: Unpack[ContextOptions]) -> ContextBundle:
        return self._exchange(calls.context(task, options))

    def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResults:
        return self._exchange(calls.search(query, options))

    def timeline(self, ids: Sequence[str], *, purpose: str | None = None) -> Timeline:
        return self._exchange(calls.timeline(ids, purpose))

    def fetch(self, ids: Sequence[str], *, purpose: str | None = None) -> FetchedMemories:
        return self._exchange(calls.fetch(ids, purpose))

    def compile(
        self,
        *,
        session_id: str | None = None,
        namespace: str | None = None,
        extractor: str | None = None,
    ) -> CompileResult:
        """Compile one scope now (a session's turns or a namespace's episodes) and wait."""
        return self._exchange(calls.compile_now(session_id, namespace, extractor))

    def compile_later(
        self,
        *,
        session_id: str | None = None,
        namespace: str | None = None,
        extractor: str | None = None,
    ) -> CompileAccepted:
        """Queue a compile for the gateway's workers; poll it with `compile_job`."""
        return self._exchange(calls.compile_later(session_id, namespace, extractor))

    def compile_job(self, job_id: str) -> CompileJob:
        return self._exchange(calls.compile_job(job_id))

    def conflicts(
        self,
        *,
        namespace: str | None = None,
        status: Literal["open", "all"] = "open",
        after: str | None = None,
        limit: int | None = None,
    ) -> ConflictPage:
        return self._exchange(calls.conflicts(namespace, status, after, limit))

    def resolve_conflict(self, conflict_id: str, winner: str, reason: str) -> ConflictEntry:
        return self._exchange(calls.resolve_conflict(conflict_id, winner, reason))

    def receipt(self, receipt_id: str) -> ReceiptDetail:
        return self._exchange(calls.receipt(receipt_id))

    def receipts(
        self,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        **filters: Unpack[ReceiptFilter],
    ) -> ReceiptPage:
        """One page; `next_cursor` names the next (None on the last)."""
        return self._exchange(calls.receipts(filters, cursor, limit))

    def iter_receipts(
        self, *, page_size: int = 100, **filters: Unpack[ReceiptFilter]
    ) -> Iterator[ReceiptSummary]:
        """Every receipt the filters match, in log order, a page at a time."""
        cursor: str | None = None
        while True:
            page = self.receipts(cursor=cursor, limit=page_size, **filters)
            yield from page.receipts
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def verify_receipt(self, receipt_id: str) -> Verification:
        return self._exchange(calls.verify_receipt(receipt_id))

    def receipt_proof(self, receipt_id: str) -> InclusionProof:
        return self._exchange(calls.receipt_proof(receipt_id))

    def checkpoint(self) -> str:
        return self._exchange(calls.checkpoint())

    def export_receipts(
        self, destination: str | os.PathLike[str] | IO[bytes], **filters: Unpack[ReceiptFilter]
    ) -> Exported:
        """Stream the log (JSONL, verifiable offline) into a file without holding it in memory.
        A path is written whole or not at all (a temporary file renamed at the end)."""
        with ExportSink.open(destination) as sink:
            self._exchange(calls.export(filters), sink)
            return sink.finish()

    def replay(
        self,
        receipt_id: str,
        mode: ReplayMode = "exact",
        *,
        policy_digest: str | None = None,
        policy_yaml: str | None = None,
    ) -> ContextReplay | RefusalReplay:
        return self._exchange(calls.replay(receipt_id, mode, policy_digest, policy_yaml))

    def upload_policy(
        self, source: str | bytes, *, filename: str = "policy.yaml"
    ) -> PolicyUploaded:
        return self._exchange(calls.upload_policy(source, filename))

    def activate_policy(self, digest: str, mode: Literal["enforce", "log_only"]) -> Activated:
        return self._exchange(calls.activate_policy(digest, mode))

    def active_policy(self) -> ActivePolicy:
        return self._exchange(calls.active_policy())

    def policy(self, digest: str) -> StoredPolicy:
        return self._exchange(calls.policy(digest))

    def what_if(self, **options: Unpack[WhatIfOptions]) -> WhatIfReport:
        return self._exchange(calls.what_if(options))

    def create_session(
        self, namespace: str, task: str, **options: Unpack[SessionOptions]
    ) -> SessionInfo:
        return self._exchange(calls.create_session(namespace, task, options))

    def append_turns(
        self, session_id: str, turns: Sequence[NewTurn], *, idempotency_key: str | None = None
    ) -> Appended:
        """Append up to 100 turns in order; retried with the same idempotency key."""
        return self._exchange(calls.append_turns(session_id, turns, idempotency_key))

    def session_context(
        self, session_id: str, **options: Unpack[SessionContextOptions]
    ) -> SessionContext:
        return self._exchange(calls.session_context(session_id, options))

    def session(self, session_id: str) -> SessionInfo:
        return self._exchange(calls.session(session_id))

    def history(
        self,
        session_id: str,
        *,
        after: int = 0,
        limit: int | None = None,
        purpose: str | None = None,
    ) -> HistoryPage:
        """One page of the history after turn `after`; `next_after` names the next."""
        return self._exchange(calls.history(session_id, after, limit, purpose))

    def iter_history(
        self, session_id: str, *, page_size: int = 100, purpose: str | None = None
    ) -> Iterator[HistoryTurn]:
        """Every turn the key may see, in order, a page (and a receipt) at a time."""
        after: int | None = 0
        while after is not None:
            page = self.history(session_id, after=after, limit=page_size, purpose=purpose)
            yield from page.turns
            after = page.next_after


def now() -> datetime:
    """The wall clock, for Retry-After dates (the shell may read it; nothing pure does)."""
    return datetime.now(UTC)
