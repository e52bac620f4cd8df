"""The process-wide runtime: database, pool, embedder, tokenizer, clock. Built in the lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from gateway.core.tokens import Tokenizer, load_tokenizer
from gateway.domain.clock import Clock, IdFactory
from gateway.embedding import Embedder, build_embedder
from gateway.shell.clock import new_ulid, system_clock
from gateway.shell.settings import Settings, SettingsError
from gateway.shell.signing import load_signer
from gateway.store.database import EmbeddedPostgres, app_login_url, check_login, database_url
from gateway.store.migrator import apply_migrations
from gateway.store.pool import Pool, open_pool
from gateway.usecases.access.policy import PolicyRegistry
from gateway.usecases.audit.replay import Replayer
from gateway.usecases.compiling.extractors import build_extractors
from gateway.usecases.compiling.jobs import Compiler
from gateway.usecases.disclosure.pipeline import Discloser, assembler_named, makers_of
from gateway.usecases.disclosure.requests import Disclosures
from gateway.usecases.memories.conflicts import Conflicts
from gateway.usecases.memories.erasure import Eraser
from gateway.usecases.memories.supersession import Superseder
from gateway.usecases.memories.writer import Writer
from gateway.usecases.receiptlog.checkpoints import Checkpointer
from gateway.usecases.receiptlog.group_commit import GroupCommit
from gateway.usecases.receiptlog.recorder import Recorder
from gateway.usecases.sessions.context import SessionContexts
from gateway.usecases.sessions.sessions import Sessions
from gateway.usecases.sessions.summarizers import build_summarizer

__all__ = ["Runtime", "start_runtime"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Runtime:
    settings: Settings
    database_url: (
        str  # the operator's: migrations, key issuance (the pool logs in least-privileged)
    )
    pool: Pool
    receipt_pool: Pool  # the receipt log's group commit writes on its own connection
    replica: Pool | None  # GATEWAY_READ_DATABASE_URL: audit reads, served by a standby
    embedder: Embedder
    tokenizer: Tokenizer
    clock: Clock
    new_id: IdFactory
    writer: Writer
    discloser: Discloser
    replayer: Replayer
    disclosures: Disclosures
    checkpointer: Checkpointer
    sessions: Sessions
    session_contexts: SessionContexts
    eraser: Eraser
    compiler: Compiler
    conflicts: Conflicts


@asynccontextmanager
async def start_runtime(
    settings: Settings, *, clock: Clock = system_clock, new_id: IdFactory = new_ulid
) -> AsyncIterator[Runtime]:
    async with AsyncExitStack() as stack:
        embedded = None
        if settings.embedded:
            embedded = stack.enter_context(EmbeddedPostgres(settings.data_dir))
            _log.info("embedded PostgreSQL running under %s", embedded.pgdata)
        url = database_url(settings, embedded)
        if settings.migrate_on_start:
            applied = await asyncio.to_thread(apply_migrations, url)
            if applied:
                _log.info("applied migrations: %s", ", ".join(applied))
        login = app_login_url(settings, embedded)
        await asyncio.to_thread(check_login, login)
        tokenizer = load_tokenizer(settings.tokenizer)
        embedder = await asyncio.to_thread(build_embedder, settings)
        signer = await asyncio.to_thread(load_signer, settings)
        pool = open_pool(login, settings)
        await pool.open(wait=True, timeout=30)
        stack.push_async_callback(pool.close)
        checkpointer = Checkpointer(pool, signer, settings.checkpoint_interval_seconds)
        # The receipt writer's own connection: requests wait for it holding theirs.
        receipt_pool = open_pool(login, settings, size=1, name="ctxgw-receipts")
        await receipt_pool.open(wait=True, timeout=30)
        stack.push_async_callback(receipt_pool.close)
        replica = None
        if settings.read_database_url is not None:
            replica = open_pool(settings.read_database_url, settings, name="ctxgw-replica")
            await replica.open(wait=True, timeout=30)
            stack.push_async_callback(replica.close)
        try:
            assembler = assembler_named(settings.assembler)
        except LookupError as exc:  # a version this gateway does not build
            raise SettingsError({"GATEWAY_ASSEMBLER": str(exc)}) from None
        discloser = Discloser(
            embedder=embedder,
            recorder=Recorder(log=GroupCommit(receipt_pool, signer), new_id=new_id),
            policies=PolicyRegistry(),
            makers=makers_of(assembler, tokenizer.name, embedder),
        )
        summarizer = build_summarizer(settings, tokenizer)
        stack.push_async_callback(summarizer.aclose)
        session_contexts = SessionContexts(
            pool=pool,
            discloser=discloser,
            summarizer=summarizer,
            tokenizer=tokenizer,
            clock=clock,
            new_id=new_id,
        )
        replayer = Replayer(discloser)
        superseder = Superseder(settings.supersede_jaccard, new_id)
        writer = Writer(
            embedder=embedder,
            tokenizer=tokenizer,
            clock=clock,
            new_id=new_id,
            superseder=superseder,
            policies=discloser.policies,
        )
        extractors = build_extractors(settings, embedder)
        for extractor in extractors.values():
            stack.push_async_callback(extractor.aclose)
        compiler = Compiler(
            pool, writer, extractors, clock, new_id, settings.compile_reclaim_seconds
        )
        task = asyncio.create_task(checkpointer.run(), name="ctxgw-checkpointer")
        stack.push_async_callback(_cancel, task)
        stop_worker = asyncio.Event()
        worker = asyncio.create_task(compiler.run_worker(stop_worker), name="ctxgw-compile-worker")
        stack.push_async_callback(_stop, stop_worker, worker)
        yield Runtime(
            settings=settings,
            database_url=url,
            pool=pool,
            receipt_pool=receipt_pool,
            replica=replica,
            embedder=embedder,
            tokenizer=tokenizer,
            clock=clock,
            new_id=new_id,
            writer=writer,
            discloser=discloser,
            replayer=replayer,
            disclosures=Disclosures(pool, discloser, replayer, clock, settings.default_budget),
            checkpointer=checkpointer,
            sessions=Sessions(pool, writer, discloser, tokenizer, clock, new_id),
            session_contexts=session_contexts,
            eraser=Eraser(pool, discloser.recorder, clock),
            compiler=compiler,
            conflicts=Conflicts(pool, superseder, clock, discloser.policies),
        )


async def _stop(stop: asyncio.Event, task: asyncio.Task[None], grace: float = 30.0) -> None:
    """Ask a loop to stop and wait for it; cancel it only if it overstays `grace` seconds."""
    stop.set()
    try:
        await asyncio.wait_for(asyncio.shield(task), grace)
    except TimeoutError:
        await _cancel(task)


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
