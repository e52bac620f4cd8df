"""What `make_golden` asks the gateway, in order: every request that writes a receipt is noted
(`Note`), so the index can say what each golden receipt is.

Four phases, each on the state the one before left:

1. memories (the shipped default policy): labels, a claim key superseded by a newer value, an
   explicit new version, a deletion, an expiry, facts compiled from a session (one superseding
   another), and two writers' facts for one claim at one instant (an open conflict);
2. disclosures: context bundles (plain, compiled facts, `as_of`, two per assembler version),
   search, timeline, fetch, a session's contexts (one per layout) and a history page, of each
   assembler that reads the question a bundle answering a question of the user's own about the
   session's turns, replays (exact, of a replay, current, what_if, of a session context), then
   the conflict resolved;
3. the strict bundle: in log_only, then enforced (denials, a cap, redactions), and every
   refusable disclosure refused for want of a purpose, a refusal replayed;
4. erasure: a memory a bundle used (its exact replay then answers `memory_erased`) and a turn.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

import httpx
import psycopg
from litestar import Litestar

from tests.gateway.golden import phases, seeding
from tests.gateway.golden.golden import TENANT

__all__ = ["Gateway", "Key", "Note", "Versioned", "insert_keys", "run", "versions"]

# A tree without `gateway.core.versions` (58a830a) names its four assemblers in
# `gateway.core.assembly`, the current one `ASSEMBLER`.
ASSEMBLERS = ("COMPACT", "CONFLICTS", "PARTNERS", "ASSEMBLER")


class Versioned(Protocol):
    """An assembler or a session layout: a frozen value named by its version."""

    @property
    def version(self) -> str: ...


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as missing:
        if missing.name != name:
            raise
        return None


def versions() -> tuple[tuple[Versioned, ...], tuple[Versioned, ...]]:
    """Every assembler and every session layout (with its values), oldest first, as the code at
    hand has them. Looked up by name: the commit the first golden set is made from (58a830a)
    keeps its four assemblers in `gateway.core.assembly` and its layouts in
    `gateway.core.session`; later code lists every assembler in the registry
    `gateway.core.versions.ASSEMBLERS` and moved the earlier layouts' values out of the gateway,
    into `tests.gateway.core.earlier_layouts`, and this module must import with either."""
    registry = _module("gateway.core.versions")
    if registry is not None:
        assemblers = tuple(registry.ASSEMBLERS.by_version.values())
    else:
        home = importlib.import_module("gateway.core.assembly")
        assemblers = tuple(getattr(home, name) for name in ASSEMBLERS)
    layouts = getattr(importlib.import_module("gateway.core.session"), "LAYOUTS", None)
    if layouts is None:
        layouts = importlib.import_module("tests.gateway.core.earlier_layouts").LAYOUTS
    return assemblers, tuple(layouts.values())


class Clock(Protocol):
    now: datetime

    def tick(self, by: timedelta = ...) -> datetime: ...


@dataclass(frozen=True, slots=True)
class Key:
    name: str
    key: str
    key_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


@dataclass(frozen=True, slots=True)
class Note:
    receipt_id: str
    what: str
    replay: str | None  # "identical", "memory_erased", or None: not replayed


# name: (role, namespaces, agent_id)
KEYS: dict[str, tuple[str, list[str], str | None]] = {
    "agent": ("agent", ["*"], "agent-1"),
    "planner": ("agent", ["team"], "planner"),
    "coder": ("agent", ["team"], "coder"),
    "auditor": ("auditor", ["*"], "auditor-1"),
    "admin": ("admin", ["*"], None),
}


def insert_keys(url: str, at: datetime, new_id: Callable[[datetime], str]) -> dict[str, Key]:
    """The tenant and its keys, with fixed ids and secrets (`issue_key` draws both at random)."""
    keys: dict[str, Key] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO tenants (tenant_id) VALUES (%s)", (TENANT,))
        for name, (role, namespaces, agent_id) in KEYS.items():
            key_id = new_id(at).lower()
            seed = hashlib.sha256(f"ctxgw golden key {name}".encode()).digest()
            secret = base64.urlsafe_b64encode(seed).decode("ascii").rstrip("=")
            conn.execute(
                "INSERT INTO api_keys (tenant_id, key_id, secret_sha256, role, agent_id,"
                " namespaces) VALUES (%s, %s, %s, %s, %s, %s)",
                (
                    TENANT,
                    key_id,
                    hashlib.sha256(secret.encode()).digest(),
                    role,
                    agent_id,
                    namespaces,
                ),
            )
            keys[name] = Key(name, f"ctxgw.{TENANT}.{key_id}.{secret}", key_id)
    return keys


class RequestFailedError(RuntimeError):
    pass


@dataclass
class Gateway:
    """The app as the scenario drives it: each request moves the clock first."""

    http: httpx.AsyncClient
    app: Litestar
    clock: Clock
    before_request: Callable[[], None]
    notes: list[Note] = dataclasses.field(default_factory=list)

    async def call(
        self,
        method: str,
        path: str,
        key: Key,
        body: object = None,
        *,
        params: Mapping[str, str | int] | None = None,
        status: int = 200,
    ) -> Any:
        self.before_request()
        response = await self.http.request(
            method, path, json=body, params=params, headers=key.headers
        )
        if response.status_code != status:
            raise RequestFailedError(
                f"{method} {path}: {response.status_code} (expected {status}) {response.text}"
            )
        return response.json()

    async def receipted(
        self,
        what: str,
        method: str,
        path: str,
        key: Key,
        body: object = None,
        *,
        params: Mapping[str, str | int] | None = None,
        status: int = 200,
        replay: str | None = None,
    ) -> Any:
        """A request that writes a receipt: noted with `what` and its replay's outcome."""
        answer = await self.call(method, path, key, body, params=params, status=status)
        self.notes.append(Note(answer["receipt_id"], what, replay))
        return answer

    def elapse(self, by: timedelta) -> None:
        self.clock.tick(by)

    @contextmanager
    def assembler(self, assembler: Versioned) -> Iterator[None]:
        """The block's bundles built by `assembler`, as a gateway of that version built them."""
        state = self.app.state
        current = state.runtime
        discloser = dataclasses.replace(
            current.discloser,
            makers=dataclasses.replace(current.discloser.makers, assembler=assembler),
        )
        disclosures = dataclasses.replace(current.disclosures, discloser=discloser)
        state.runtime = dataclasses.replace(current, disclosures=disclosures)
        try:
            yield
        finally:
            state.runtime = current

    @contextmanager
    def layout(self, layout: Versioned) -> Iterator[None]:
        """The block's session contexts cut by `layout`."""
        state = self.app.state
        current = state.runtime
        contexts = dataclasses.replace(current.session_contexts, layout=layout)
        state.runtime = dataclasses.replace(current, session_contexts=contexts)
        try:
            yield
        finally:
            state.runtime = current


async def run(gateway: Gateway, keys: dict[str, Key]) -> list[Note]:
    """The whole scenario; the notes of every receipt it made, in order."""
    written = await seeding.write_memories(gateway, keys)
    assemblers, layouts = versions()
    session_id = await phases.disclose(gateway, keys, written, assemblers, layouts)
    await phases.enforce_strict(gateway, keys, written, session_id)
    await phases.erase(gateway, keys)
    return gateway.notes
