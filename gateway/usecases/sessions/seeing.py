"""Who may see a session (ARCHITECTURE §11): its tenant's keys that may use its namespace, and
whom the policy in force lets see it, its labels and the texts it pins. Anyone else is told it
does not exist."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gateway.core.tokens import Tokenizer
from gateway.domain.errors import NotFoundError
from gateway.domain.principal import Principal
from gateway.store import sessions as store
from gateway.store.database import Connection
from gateway.usecases.access.policy import PolicyRegistry
from gateway.usecases.access.sight import sight_of
from gateway.usecases.sessions.conversation import Pinned, pinned_as_judged, pinned_views

__all__ = ["Seen", "open_session", "seen_session"]


@dataclass(frozen=True, slots=True)
class Seen:
    """A session its caller may see, and its system prompt and task as the caller is shown
    them."""

    row: store.SessionRow
    pinned: Pinned


async def open_session(
    conn: Connection, principal: Principal, session_id: str, *, lock: bool = False
) -> store.SessionRow:
    """The session, or 404 when it is absent, another tenant's or in a namespace the key may
    not use (never 403: its existence is not the caller's to learn)."""
    session = await store.find_session(conn, principal.tenant_id, session_id, lock=lock)
    if session is None or not principal.may_use(session.namespace):
        raise NotFoundError(f"session {session_id} not found", code="session_not_found")
    return session


async def seen_session(
    conn: Connection,
    principal: Principal,
    session_id: str,
    *,
    policies: PolicyRegistry,
    tokenizer: Tokenizer,
    at: datetime,
    purpose: str | None = None,
    lock: bool = False,
) -> Seen:
    """The session, as `open_session` finds it, if its caller may also see it: a session the
    policy in force denies the caller (its labels, its namespace, the texts it pins: judged as
    its turns are, `pinned_views`) is 404 as well, as for an unknown session. Its task and
    system prompt reach whoever reads or steps it, so nobody the policy denies them may; what
    its redaction rewrites of them is rewritten in what it is shown (`Seen.pinned`)."""
    session = await open_session(conn, principal, session_id, lock=lock)
    namespaces = (session.namespace,)
    sight = await sight_of(conn, policies, principal, at, namespaces=namespaces, purpose=purpose)
    pinned = pinned_as_judged(
        sight.judge(pinned_views(session, tokenizer)), session, caps_withhold=False
    )
    if pinned.denied:
        raise NotFoundError(f"session {session_id} not found", code="session_not_found")
    return Seen(session, pinned)
