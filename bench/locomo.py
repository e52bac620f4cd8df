"""LoCoMo (snap-research, CC BY-NC 4.0): long conversations between two friends, QA with evidence.

Read at run time from ``../shared/bench/locomo_dev.json`` and never copied into the repository
(its licence allows benchmarking only). One namespace per conversation; every turn one episodic
memory ``[date_time] speaker: text`` with source_ref its ``dia_id``, so a question's evidence
``dia_id``s are its evidence turns. Questions whose evidence names no turn of the conversation
(three in conversations 1-3) are left out. A session's stamp reads like
``1:56 pm on 8 May, 2023`` (:func:`parse_stamp`); the answers are read apart (:func:`answers`), as
the retrieval benchmarks need none.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.longmemeval import Question, Turn

__all__ = ["DATASET", "answers", "load_questions", "parse_stamp"]

DATASET = Path(__file__).resolve().parents[1].parent / "shared/bench/locomo_dev.json"
_SESSION = re.compile(r"session_(\d+)")


def parse_stamp(stamp: str) -> datetime:
    """A session's stamp as a time. The data set's times carry no zone; read them as UTC, as the
    gateway stores every time."""
    return datetime.strptime(stamp, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _question_id(sample: dict[str, Any], number: int) -> str:
    return f"{sample['sample_id']}/{number}"


def _turns(conversation: dict[str, Any]) -> tuple[Turn, ...]:
    numbers = sorted(
        int(m.group(1)) for key in conversation if (m := _SESSION.fullmatch(key)) is not None
    )
    turns: list[Turn] = []
    for number in numbers:
        stamp = conversation[f"session_{number}_date_time"]
        for turn in conversation[f"session_{number}"]:
            turns.append(
                Turn(
                    source_ref=turn["dia_id"],
                    stamp=stamp,
                    order=len(turns),
                    role=turn["speaker"],
                    text=turn["text"],
                )
            )
    return tuple(turns)


def load_questions(path: Path = DATASET) -> list[Question]:
    """Every question with evidence among its conversation's turns, in file order."""
    questions: list[Question] = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        turns = _turns(sample["conversation"])
        refs = {t.source_ref for t in turns}
        namespace = f"locomo-{sample['sample_id']}"
        for number, qa in enumerate(sample["qa"]):
            evidence = frozenset(e for e in qa.get("evidence", ()) if e in refs)
            if evidence:
                questions.append(
                    Question(
                        question_id=_question_id(sample, number),
                        question_type=str(qa.get("category", "")),
                        question=qa["question"],
                        turns=turns,
                        evidence=evidence,
                        namespace=namespace,
                    )
                )
    return questions


def answers(path: Path = DATASET) -> dict[str, str]:
    """Each question's answer as a string (a few are numbers), by question id. Most adversarial
    questions (category 5) have none: they carry only the ``adversarial_answer`` a misled reader
    would give."""
    return {
        _question_id(sample, number): str(qa["answer"])
        for sample in json.loads(path.read_text(encoding="utf-8"))
        for number, qa in enumerate(sample["qa"])
        if "answer" in qa
    }
