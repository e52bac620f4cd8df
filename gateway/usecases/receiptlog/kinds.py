"""Every kind of receipt the gateway writes, registered once (ARCHITECTURE §8).

A kind is a typed value: its name (the receipt's `kind`, the console's filter, the metrics'
label, the OpenAPI enum of `GET /v1/receipts?kind=`: `gateway.http.wire.KindText`), the Struct
of its signed members (`gateway.responses.receipt_bodies`), the Struct its request is recorded
as when the policy's request stage judges it (so that a refusal records it as the kind itself
would), how it is replayed (`replay_as`) and the response body answered for it. Everything that
needs the list of kinds reads it from `KINDS`; no other module spells a kind's name (a test
holds every module of the gateway to that).

Adding a kind: the module that writes its receipt (with its `Kind` from here), its body Struct,
and one line below. The replay use case (`gateway.usecases.audit.replay`) dispatches on
`replay_as`, a closed set of the ways a receipt is rebuilt: the replay functions sit above the
writers that need the kinds' names, so they cannot be listed here without an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import msgspec

from gateway.domain.principal import Role
from gateway.responses.disclosures import (
    ContextBundle,
    ContextReplay,
    FetchedMemories,
    RefusalReplay,
    SearchResults,
    Timeline,
)
from gateway.responses.memories import Erased
from gateway.responses.receipt_bodies import (
    ContextBody,
    ErasureBody,
    FetchBody,
    HistoryBody,
    HistoryRequestRecord,
    IdsRequestRecord,
    RefusalBody,
    RefusalReplayBody,
    SearchBody,
    SearchRequestRecord,
    SessionContextBody,
    SessionReplayBody,
    SessionRequestRecord,
    TimelineBody,
)
from gateway.responses.receipt_parts import ContextRequestRecord
from gateway.responses.sessions import HistoryPage, SessionContext, SessionContextReplay

__all__ = [
    "CONTEXT",
    "ERASURE",
    "FETCH",
    "HISTORY",
    "KINDS",
    "KIND_NAMES",
    "REFUSAL",
    "REFUSAL_REPLAY",
    "REPLAY",
    "SEARCH",
    "SESSION_CONTEXT",
    "SESSION_REPLAY",
    "TIMELINE",
    "Kind",
    "ReplayAs",
    "kind_named",
]

Body = TypeVar("Body", bound=msgspec.Struct)

# How a receipt is rebuilt: a bundle from its recorded candidates, a session context from its
# recorded turns, summary and memory part, a refusal by judging its request stage again.
ReplayAs = Literal["bundle", "session", "refusal"]


@dataclass(frozen=True, slots=True)
class Kind(Generic[Body]):
    name: str
    # What the receipt records, as the console labels it.
    label: str
    # The roles whose requests write it.
    written_for: tuple[Role, ...]
    # The kind's members of the signed body (the header is `ReceiptHeader`).
    body: type[Body]
    # How its request is recorded, when the policy's request stage judges it (None: not judged,
    # so never refused).
    request: type[msgspec.Struct] | None
    # How it is rebuilt on replay; None: it cannot be.
    replay_as: ReplayAs | None
    # The body answered for it (a refusal answers a problem, 403 `policy_refused`).
    response: type[msgspec.Struct] | None

    def read(self, members: Mapping[str, Any]) -> Body:
        """The kind's members of a decoded body (the header's fields are ignored); a
        `msgspec.ValidationError` when the body is not of this kind's shape."""
        return msgspec.convert(members, self.body)


_ANYONE: tuple[Role, ...] = ("agent", "auditor", "admin")
_AGENTS: tuple[Role, ...] = ("agent", "admin")
_AUDITORS: tuple[Role, ...] = ("auditor", "admin")

CONTEXT = Kind(
    "context", "context bundle", _ANYONE, ContextBody, ContextRequestRecord, "bundle", ContextBundle
)
SEARCH = Kind(
    "search", "search results", _AGENTS, SearchBody, SearchRequestRecord, None, SearchResults
)
TIMELINE = Kind("timeline", "timeline", _AGENTS, TimelineBody, IdsRequestRecord, None, Timeline)
FETCH = Kind(
    "fetch", "fetched memories", _AGENTS, FetchBody, IdsRequestRecord, None, FetchedMemories
)
HISTORY = Kind(
    "history", "session history", _AGENTS, HistoryBody, HistoryRequestRecord, None, HistoryPage
)
SESSION_CONTEXT = Kind(
    "session_context",
    "session context",
    _AGENTS,
    SessionContextBody,
    SessionRequestRecord,
    "session",
    SessionContext,
)
# A replay of a bundle holds every member a context receipt holds, so it replays in turn.
REPLAY = Kind("replay", "replay of a bundle", _AUDITORS, ContextBody, None, "bundle", ContextReplay)
SESSION_REPLAY = Kind(
    "session_replay",
    "replay of a session context",
    _AUDITORS,
    SessionReplayBody,
    None,
    None,
    SessionContextReplay,
)
REFUSAL = Kind("refusal", "refused request", _ANYONE, RefusalBody, None, "refusal", None)
REFUSAL_REPLAY = Kind(
    "refusal_replay", "replay of a refusal", _AUDITORS, RefusalReplayBody, None, None, RefusalReplay
)
ERASURE = Kind("erasure", "erasure", ("admin",), ErasureBody, None, None, Erased)

KINDS: tuple[Kind[Any], ...] = (
    CONTEXT,
    SEARCH,
    TIMELINE,
    FETCH,
    HISTORY,
    SESSION_CONTEXT,
    REPLAY,
    SESSION_REPLAY,
    REFUSAL,
    REFUSAL_REPLAY,
    ERASURE,
)
_BY_NAME: Mapping[str, Kind[Any]] = {k.name: k for k in KINDS}
KIND_NAMES: tuple[str, ...] = tuple(_BY_NAME)


def kind_named(name: str) -> Kind[Any]:
    """The kind a stored receipt names; a LookupError for a name this gateway never wrote."""
    return _BY_NAME[name]
