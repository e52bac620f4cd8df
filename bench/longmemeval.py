"""LongMemEval_S (MIT): questions over ~48 chat sessions each, with turn-level evidence labels.

Each turn becomes one episodic memory: content ``[date] role: content``, heading a one-line prefix
of the turn, source_ref ``session_id/turn_index`` so that results map back to the labels.
:class:`Turn` and :class:`Question` are the shape every conversation corpus is read into
(:mod:`bench.locomo` too): a question asks about the turns of one namespace, and its evidence is
the set of those turns' source refs.
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
    source_ref: str  # session_id/turn_index (LongMemEval), the dia_id (LoCoMo)
    stamp: str  # the session's date as the corpus writes it into the memory
    order: int  # position in the haystack, oldest session first
    role: str  # the role or the speaker
    text: str

    @property
    def content(self) -> str:
        return f"[{self.stamp}] {self.role}: {self.text}"

    @property
    def heading(self) -> str:
        return one_line(self.text)[:HEADING_CHARS].strip() or "(empty turn)"


@dataclass(frozen=True)
class Question:
    question_id: str
    question_type: str
    question: str
    turns: tuple[Turn, ...]  # everything in the namespace, shared by its questions
    evidence: frozenset[str]  # source refs of the evidence turns
    namespace: str


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
            labelled = [
                (
                    Turn(
                        source_ref=f"{_session_ref(sessions, session)}/{index}",
                        stamp=f"{_date(session['date']):%Y/%m/%d %H:%M}",
                        order=order,
                        role=turn["role"],
                        text=turn["content"].replace("\x00", ""),
                    ),
                    bool(turn.get("has_answer")),
                )
                for order, (session, index, turn) in enumerate(
                    (s, i, t) for s in sessions for i, t in enumerate(s["turns"])
                )
            ]
            evidence = frozenset(t.source_ref for t, has_answer in labelled if has_answer)
            if evidence:
                questions.append(
                    Question(
                        question_id=row["question_id"],
                        question_type=row["question_type"],
                        question=row["question"],
                        turns=tuple(t for t, _ in labelled),
                        evidence=evidence,
                        namespace=f"lme-{row['question_id']}",
                    )
                )
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
            "source_type": "bench-turn",
            "source_ref": turn.source_ref,
            "idempotency_key": f"{question.namespace}/{turn.source_ref}",
        }
        for turn in question.turns
    ]
