"""Group commit of the receipt log: concurrent disclosures share transactions, the log stays one
gapless chain, and a batch that cannot be written answers none of its requests. Real HTTP
(uvicorn), real PostgreSQL, real signatures."""

from __future__ import annotations

import asyncio
import hashlib
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
from litestar.testing import TestClient
from psycopg import sql

from gateway.shell.clock import new_ulid
from gateway.shell.settings import Settings
from gateway.store.pool import open_pool
from gateway.store.receipt_appends import LogHead
from gateway.store.receipts import whole_envelope
from gateway.usecases.receiptlog.group_commit import GroupCommit, PendingReceipt, place, sign
from receipts import RECEIPT_SCHEMA, Envelope, Keyring, Signer, generate_keyring, verify_receipt
from receipts.canonical import CanonicalTemplate, decode_body
from receipts.keyfiles import load_private_key
from receipts.signing import verify_envelope
from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory

CLIENTS = 16


def _seed(client: TestClient[Any], key: Key) -> None:
    items = [memory(heading=f"Deploy step {n}", content=f"Run step {n} of the deploy.") for n in range(8)]  # fmt: skip
    assert client.post("/v1/memories/batch", json={"items": items}, headers=key.headers).is_success


async def _ask_all(base_url: str, key: Key, count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=base_url, headers=key.headers, timeout=60) as http:
        return await asyncio.gather(
            *(http.post("/v1/context", json={"task": f"deploy step {n}"}) for n in range(count))
        )


def _log(database_url: str, tenant_id: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT seq, receipt_id, prev, leaf, body, xmin::text FROM receipts"
            " WHERE tenant_id = %s ORDER BY seq",
            (tenant_id,),
        ).fetchall()


def test_concurrent_receipts_share_commits_and_chain_gaplessly(
    client: TestClient[Any], served: str, agent: Key, database_url: str
) -> None:
    _seed(client, agent)
    before = len(_log(database_url, agent.tenant_id))
    responses = asyncio.run(_ask_all(served, agent, 3 * CLIENTS))
    assert [r.status_code for r in responses] == [200] * (3 * CLIENTS)
    rows = _log(database_url, agent.tenant_id)
    assert [row[0] for row in rows] == list(range(1, len(rows) + 1))  # gapless
    prev = bytes(32)
    for _, _, row_prev, leaf, body, _ in rows:
        assert bytes(row_prev) == prev
        assert bytes(leaf) == hashlib.sha256(b"\x00" + bytes(body)).digest()
        assert decode_body(bytes(body))["log"]["prev"] == prev.hex()
        prev = bytes(leaf)
    answered = {r.json()["receipt_id"] for r in responses}
    written = {row[1] for row in rows[before:]}
    assert answered == written  # every answer's receipt, and no other
    transactions = {row[5] for row in rows[before:]}
    assert len(transactions) < len(written)  # some receipts were committed together


def test_a_batch_that_cannot_be_written_answers_none_of_its_requests(
    client: TestClient[Any], served: str, agent: Key, database_url: str
) -> None:
    _seed(client, agent)
    before = _log(database_url, agent.tenant_id)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("REVOKE INSERT ON receipts FROM ctxgw_app")
    responses = asyncio.run(_ask_all(served, agent, CLIENTS))
    assert {r.status_code for r in responses} == {503}
    assert {r.json()["code"] for r in responses} == {"receipt_unavailable"}
    assert all("bundle" not in r.json() for r in responses)
    assert _log(database_url, agent.tenant_id) == before
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("GRANT INSERT ON receipts TO ctxgw_app")
    again = asyncio.run(_ask_all(served, agent, 2))  # the writer recovers
    assert [r.status_code for r in again] == [200, 200], [r.text for r in again]
    assert len(_log(database_url, agent.tenant_id)) == len(before) + 2


def _pending(tenant_id: str) -> PendingReceipt:
    issued_at = datetime.now(UTC)
    receipt_id = new_ulid(issued_at)
    body = {"schema": RECEIPT_SCHEMA, "receipt_id": receipt_id, "tenant_id": tenant_id}
    return PendingReceipt(
        template=CanonicalTemplate(body, "log"),
        receipt_id=receipt_id,
        kind="context",
        agent_id="a",
        key_id="k",
        issued_at=issued_at,
        bundle_sha256=None,
        policy_digest=None,
        parent_receipt_id=None,
        disclosed_ids=(),
    )


FLUSH_DELAY = 0.1  # PostgreSQL's longest commit_delay: every WAL flush waits this long first


def test_the_log_is_released_before_the_disk_is_written(
    settings: Settings, agent: Key, database_url: str, app_database_url: str
) -> None:
    """Two writers (two processes' worth) append to one tenant while every flush takes 100 ms:
    each is answered only after a flush (durable), yet neither holds the log across one, so
    the second does not wait for the first's disk."""
    name = database_url.partition("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER ROLE ctxgw_app IN DATABASE {} SET commit_delay = 100000").format(
                sql.Identifier(name)
            )
        )
        conn.execute(
            sql.SQL("ALTER ROLE ctxgw_app IN DATABASE {} SET commit_siblings = 0").format(
                sql.Identifier(name)
            )
        )
    keyring, pem = generate_keyring("k")
    signer = Signer(keyring, load_private_key(pem))

    async def append_from_two_writers() -> tuple[list[float], list[GroupCommit]]:
        pools = [open_pool(app_database_url, settings, size=1) for _ in range(2)]
        for pool in pools:
            await pool.open(wait=True)
        writers = [GroupCommit(pool, signer) for pool in pools]

        async def timed(writer: GroupCommit) -> float:
            started = time.monotonic()
            await writer.append(agent.tenant_id, _pending(agent.tenant_id))
            return time.monotonic() - started

        try:
            await writers[0].append(agent.tenant_id, _pending(agent.tenant_id))  # warm up
            writers[0].held_seconds = 0.0
            waits = await asyncio.gather(*(timed(w) for w in writers))
        finally:
            for pool in pools:
                await pool.close()
        return list(waits), writers

    waits, writers = asyncio.run(append_from_two_writers())
    assert all(wait >= FLUSH_DELAY for wait in waits)  # answered after the flush
    assert max(waits) < 2 * FLUSH_DELAY  # the second did not queue behind the first's flush
    assert all(w.held_seconds < FLUSH_DELAY / 2 for w in writers)
    rows = _log(database_url, agent.tenant_id)
    assert [row[0] for row in rows] == [1, 2, 3]


class _SlowSigner(Signer):
    """Signs as the gateway does, after holding the process for `SIGNING` seconds, and notes
    what another connection found meanwhile."""

    found: tuple[int, int, bool] | None = None

    def __init__(self, database_url: str, *args: Any) -> None:
        super().__init__(*args)
        self.database_url = database_url

    def sign(self, body: bytes, tenant_id: str) -> Envelope:
        seq = decode_body(body)["log"]["seq"]
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            # What an auditor, and another process's writer, find while the receipt is signed.
            in_log, signed = conn.execute(
                "SELECT (SELECT count(*) FROM receipts WHERE tenant_id = %(t)s AND seq = %(s)s),"
                " (SELECT count(*) FROM receipt_signatures WHERE tenant_id = %(t)s AND seq = %(s)s)",
                {"t": tenant_id, "s": seq},
            ).fetchone() or (0, 0)
            with conn.transaction():
                try:
                    conn.execute(
                        "SELECT size FROM receipt_logs WHERE tenant_id = %s FOR UPDATE NOWAIT",
                        (tenant_id,),
                    )
                    free = True
                except psycopg.errors.LockNotAvailable:
                    free = False
        self.found = (int(in_log), int(signed), free)
        time.sleep(SIGNING)
        return super().sign(body, tenant_id)


SIGNING = 0.2


def test_the_log_is_released_before_the_receipts_are_signed(
    settings: Settings, agent: Key, database_url: str, app_database_url: str
) -> None:
    """Signing is not in the serial section: while a batch is signed, its receipts are in the
    log and the log is free for the next writer; the request is answered once the signatures
    are stored, and they verify."""
    keyring, pem = generate_keyring("k")
    signer = _SlowSigner(database_url, keyring, load_private_key(pem))
    pending = _pending(agent.tenant_id)

    async def append() -> GroupCommit:
        pool = open_pool(app_database_url, settings, size=1)
        await pool.open(wait=True)
        try:
            writer = GroupCommit(pool, signer)
            await writer.append(agent.tenant_id, pending)
        finally:
            await pool.close()
        return writer

    writer = asyncio.run(append())
    assert signer.found == (1, 0, True)  # in the log, not signed yet, the log free
    assert writer.held_seconds < SIGNING / 2
    with psycopg.connect(database_url) as conn:
        stored = conn.execute(
            "SELECT r.body, s.envelope FROM receipts r JOIN receipt_signatures s USING (tenant_id, seq)"
            " WHERE r.receipt_id = %s",
            (pending.receipt_id,),
        ).fetchone()
    assert stored is not None
    body, envelope = bytes(stored[0]), stored[1]
    verify_envelope(Envelope.from_json(whole_envelope(envelope, body)), agent.tenant_id, keyring)


def test_a_receipt_left_unsigned_is_signed_before_a_checkpoint_covers_it(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings, database_url: str
) -> None:
    """A writer that placed a batch in the log but could not store its signatures (here: the
    grant is gone; in life, a crash or a lost connection) answers nothing; its receipt is in
    the chain, read as unsigned, and not yet listed by memory. The next checkpoint signs it
    (the same bytes any writer would have stored) and indexes it before covering it."""
    _seed(client, agent)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("REVOKE INSERT ON receipt_signatures FROM ctxgw_app")
    try:
        failed = client.post("/v1/context", json={"task": "deploy step 3"}, headers=agent.headers)
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("GRANT INSERT ON receipt_signatures TO ctxgw_app")
    assert failed.status_code == 503 and failed.json()["code"] == "receipt_unavailable"
    seq, receipt_id, disclosed = _last_receipt(database_url, agent.tenant_id)
    assert disclosed  # a context receipt that named memories
    auditor = make_key(role="auditor")
    unsigned = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()
    assert unsigned["envelope"]["signatures"] == []
    assert _indexed(database_url, agent.tenant_id, seq) == 0

    checkpoint = client.get("/v1/log/checkpoint", headers=auditor.headers)
    assert checkpoint.status_code == 200, checkpoint.text
    signed = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    verify_receipt(Envelope.from_json(signed["envelope"]), agent.tenant_id, keyring)
    assert _indexed(database_url, agent.tenant_id, seq) == len(disclosed)
    verified = client.get(f"/v1/receipts/{receipt_id}/verify", headers=auditor.headers).json()
    assert verified["valid"], verified


def _last_receipt(database_url: str, tenant_id: str) -> tuple[int, str, list[str]]:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT seq, receipt_id, disclosed_ids FROM receipts WHERE tenant_id = %s"
            " ORDER BY seq DESC LIMIT 1",
            (tenant_id,),
        ).fetchone()
    assert row is not None
    return int(row[0]), str(row[1]), list(row[2])


def _indexed(database_url: str, tenant_id: str, seq: int) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM receipt_disclosures WHERE tenant_id = %s AND seq = %s",
            (tenant_id, seq),
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_position_is_signed_to_the_same_bytes_by_whoever_signs_it() -> None:
    """What lets the checkpointer sign a receipt its writer could not: the envelope of a placed
    body depends on the body and the keys alone (Ed25519 and HMAC-SHA256 are deterministic)."""
    keyring, pem = generate_keyring("k")
    pending = [_pending("acme"), _pending("acme")]
    placed = place(LogHead(7, bytes(32), datetime.now(UTC)), pending)
    assert [p.seq for p in placed] == [8, 9] and placed[1].prev == placed[0].leaf
    writer, checkpointer = (Signer(keyring, load_private_key(pem)) for _ in range(2))
    assert sign(writer, "acme", placed) == sign(checkpointer, "acme", placed)
    assert sign(writer, "acme", placed) != sign(writer, "other", placed)  # the tenant's subkey
