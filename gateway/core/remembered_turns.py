"""How the assembly defence (issue 33; `gateway.core.current_values`) reads a remembered turn:
who said it and what, from the heading the session writer gave it (`statement_of`), and when
it was said (`order`).

Only remembered turns are read (their role from their heading). A compiled fact was judged by
compile's supersession against the namespace's whole history (a newer fact of its claim key
retires it in the store; two that cannot be ordered are an open conflict): read again here from
its one clause, it would be judged on less. Any other memory states nothing here, since whose
statement it is cannot be told. Turns are ordered by when they were said (`Candidate.said_at`:
an imported history is written in one go, in any order).
"""

from __future__ import annotations

import re
from datetime import datetime

from gateway.core.model import Candidate

__all__ = ["TURN", "order", "statement_of"]

TURN = re.compile(r"^(?P<role>user|assistant), turn (?P<seq>\d+): ")


def statement_of(candidate: Candidate) -> tuple[str, str] | None:
    """Who states a remembered turn and what it says (its role from the heading the session
    writer gave it); None for any other memory."""
    if candidate.source_type != "turn" or candidate.memory_type != "episodic":
        return None
    turn = TURN.match(candidate.heading)
    return (turn.group("role"), candidate.content) if turn else None


def order(candidate: Candidate) -> tuple[datetime, datetime, int, str]:
    """When a turn was said (`Candidate.said_at`: an imported history's turns are written
    today, in whatever order it was imported), then written, then its place in its session:
    turns appended in one request share an instant, and their ids are random within it, so the
    turn's number orders them as they were said (the same decisions whatever ids they drew).
    A turn remembered before turns carried their instant (`valid_from`) is ordered by its
    write alone, as the versions that decided over it did."""
    turn = TURN.match(candidate.heading)
    return (
        candidate.said_at,
        candidate.created_at,
        int(turn.group("seq")) if turn else 0,
        candidate.memory_id,
    )
