"""LongMemEval_S (MIT): questions over ~48 chat sessions each, with turn-level evidence labels.

Each turn becomes one episodic memory: content ``[date] role: content``, heading a one-line prefix
of the turn, source_ref ``session_id/turn_index`` so that results map back to the labels.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.core.render import one_line

__all__ = [
    "DATASET",
    "HEADING_CHARS",
    "Question",
    "Turn",
    "load_questions",
    "memory_items",
    "select_half",
]

DATASET = Path(__file__).resolve().parents[1].parent / "shared/bench/longmemeval_s_dev.jsonl.gz"
HEADING_CHARS = 80


@dataclass(frozen=True)
class Turn:
    source_ref: str  # session_id/turn_index
    session_date: datetime
    order: int  # position in the haystack, oldest session first
    role: str
    text: str
    has_answer: bool

    @property
    def content(self) -> str:
        return f"[{self.session_date:%Y/%m/%d %H:%M}] {self.role}: {self.text}"

    @property
    def heading(self) -> str:
        return one_line(self.text)[:HEADING_CHARS].strip() or "(empty turn)"


@dataclass(frozen=True)
class Question:
    question_id: str
    question_type: str
    question: str
    turns: tuple[Turn, ...]

    @property
    def evidence(self) -> frozenset[str]:
        return frozenset(t.source_ref for t in self.turns if t.has_answer)

    @property
    def namespace(self) -> str:
        return f"lme-{self.question_id}"


def _date(text: str) -> datetime:
    # The data set's dates carry no zone; read them as UTC, as the gateway stores every time.
    return datetime.strptime(text, "%Y/%m/%d (%a) %H:%M").replace(tzinfo=UTC)


def _session_ref(sessions: Sequence[dict[str, Any]], session: dict[str, Any]) -> str:
    """The session id, suffixed ``~n`` for its n-th repetition (a few haystacks repeat one)."""
    same = [s for s in sessions if s["session_id"] == session["session_id"]]
    position = next(i for i, s in enumerate(same) if s is session)
    return str(session["session_id"]) + (f"~{position}" if position else "")


def load_questions(path: Path = DATASET) -> list[Question]:
    """Every question with at least one evidence turn, in file order."""
    questions: list[Question] = []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            sessions = sorted(row["sessions"], key=lambda s: (_date(s["date"]), s["session_id"]))
            turns = tuple(
                Turn(
                    source_ref=f"{_session_ref(sessions, session)}/{index}",
                    session_date=_date(session["date"]),
                    order=order,
                    role=turn["role"],
                    text=turn["content"].replace("\x00", ""),
                    has_answer=bool(turn.get("has_answer")),
                )
                for order, (session, index, turn) in enumerate(
                    (s, i, t) for s in sessions for i, t in enumerate(s["turns"])
                )
            )
            question = Question(row["question_id"], row["question_type"], row["question"], turns)
            if question.evidence:
                questions.append(question)
    return questions


def select_half(questions: Sequence[Question], half: str) -> list[Question]:
    """``A``: even positions, ``B``: odd positions (interleaved, so both halves mix the question
    types in file order); anything else: all."""
    if half.upper() == "A":
        return list(questions[0::2])
    if half.upper() == "B":
        return list(questions[1::2])
    return list(questions)


def memory_items(question: Question) -> list[dict[str, Any]]:
    """Every turn of a question as a `POST /v1/memories/batch` item: an episodic memory in the
    question's own namespace, idempotent by its source so a retried batch never duplicates."""
    return [
        {
            "namespace": question.namespace,
            "memory_type": "episodic",
            "heading": turn.heading,
            "content": turn.content,
            "confidence": 0.8,
            "source_type": "longmemeval",
            "source_ref": turn.source_ref,
            "idempotency_key": f"{question.namespace}/{turn.source_ref}",
        }
        for turn in question.turns
    ]
