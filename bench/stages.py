"""The context path in-process, stage by stage, on the gateway's own runtime (pool, discloser).

It runs the same calls as ``Disclosures.context`` (policy in force, recall, index, live count, the
pure core, the receipt) inside one pooled transaction and times each, so that costs which the
gateway cannot switch off (receipts, the policy) can be measured against the same work
without them. Nothing here changes gateway behaviour; it only calls its public functions.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

from gateway.core.model import ContextRequest
from gateway.core.preparation import Found
from gateway.domain.principal import Principal
from gateway.shell.runtime import Runtime, start_runtime
from gateway.shell.settings import Settings
from gateway.store import retrieval
from gateway.store.scope import Scope
from gateway.store.transactions import transaction
from gateway.usecases.access.keys import authenticate
from gateway.usecases.access.policy import context_view, refuse_unless_required_met
from gateway.usecases.disclosure.pipeline import Admitted, compose
from gateway.usecases.disclosure.retrieval import recall_depth

__all__ = ["gather", "open_runtime", "principal_for", "timed_context"]


@contextlib.asynccontextmanager
async def open_runtime(url: str, pool_max_size: int = 17) -> AsyncIterator[Runtime]:
    with tempfile.TemporaryDirectory(prefix="ctxgw-bench-rt-") as data_dir:
        settings = Settings(
            database_url=url,
            data_dir=Path(data_dir),
            migrate_on_start=False,
            pool_min_size=2,
            pool_max_size=pool_max_size,
            log_level="WARNING",
        )
        async with start_runtime(settings) as runtime:
            yield runtime


async def principal_for(runtime: Runtime, key: str) -> Principal:
    async with transaction(runtime.pool) as conn:
        return await authenticate(conn, f"Bearer {key}")


def _scope(principal: Principal, request: ContextRequest, now: datetime) -> Scope:
    namespaces = None if "*" in request.namespaces else request.namespaces
    return Scope(principal.tenant_id, namespaces, request.memory_types, now)


async def gather(
    runtime: Runtime, principal: Principal, request: ContextRequest, now: datetime
) -> tuple[Found, dict[str, float]]:
    """What ``gateway.usecases.disclosure.retrieval.find`` returns, with the time of each query (seconds)."""
    times: dict[str, float] = {}
    async with transaction(runtime.pool, principal.tenant_id) as conn:
        inputs = await _gather(runtime, conn, principal, request, now, times)
    return inputs, times


async def _gather(
    runtime: Runtime,
    conn: object,
    principal: Principal,
    request: ContextRequest,
    now: datetime,
    times: dict[str, float],
) -> Found:
    from gateway.core.fill import index_share

    scope = _scope(principal, request, now)
    t0 = time.perf_counter()
    vector = runtime.embedder.embed([request.task])[0]
    t1 = time.perf_counter()
    candidates = await retrieval.recall(
        conn,  # type: ignore[arg-type]
        scope,
        task=request.task,
        query_vector=vector,
        embedding_model=runtime.embedder.model,
        limit=recall_depth(request),
    )
    t2 = time.perf_counter()
    share = index_share(request)
    index = await retrieval.index_entries(conn, scope, share) if share > 0 else []  # type: ignore[arg-type]
    t3 = time.perf_counter()
    total_live = await retrieval.live_count(conn, scope)  # type: ignore[arg-type]
    t4 = time.perf_counter()
    times.update(embed=t1 - t0, recall=t2 - t1, index=t3 - t2, live_count=t4 - t3)
    return Found(tuple(candidates), tuple(index), total_live)


async def timed_context(
    runtime: Runtime,
    principal: Principal,
    request: ContextRequest,
    now: datetime,
    *,
    receipt: bool,
) -> dict[str, float]:
    """One context assembly in one transaction, committed; seconds per stage and in total.

    The core runs through ``compose``, as the endpoint does; with ``receipt`` the receipt is
    written by ``Discloser.record``, without it none is (so the transaction is read-only)."""
    discloser = runtime.discloser
    times: dict[str, float] = {}
    started = time.perf_counter()
    async with transaction(runtime.pool, principal.tenant_id) as conn:
        t0 = time.perf_counter()
        view = context_view(principal, request)
        policy = await discloser.policies.in_force(conn, principal.tenant_id, now)
        admitted = Admitted(policy, refuse_unless_required_met(policy, view, now))
        times["policy_in_force"] = time.perf_counter() - t0
        found = await _gather(runtime, conn, principal, request, now, times)
        t1 = time.perf_counter()
        composed = compose(request, found, admitted, discloser.makers, at=now)
        if receipt:
            await discloser.record(conn, principal, composed, issued_at=now)
        t2 = time.perf_counter()
        times["core_and_receipt" if receipt else "core"] = t2 - t1
    ended = time.perf_counter()
    times["commit"] = ended - t2
    times["total"] = ended - started
    return times
