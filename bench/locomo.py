"""LoCoMo (snap-research, CC BY-NC 4.0): long conversations between two friends, QA with evidence.

Read at run time from ``../shared/bench/locomo_dev.json`` and never copied into the repository
(its licence allows benchmarking only). One namespace per conversation; every turn one episodic
memory ``[date_time] speaker: text`` with source_ref its ``dia_id``, so a question's evidence
``dia_id``s are its evidence turns. Questions whose evidence names no turn of the conversation
(one of them in conversations 1-3) are left out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bench.longmemeval import Question, Turn

__all__ = ["DATASET", "load_questions"]

DATASET = Path(__file__).resolve().parents[1].parent / "shared/bench/locomo_dev.json"
_SESSION = re.compile(r"session_(\d+)")


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
                        question_id=f"{sample['sample_id']}/{number}",
                        question_type=str(qa.get("category", "")),
                        question=qa["question"],
                        turns=turns,
                        evidence=evidence,
                        namespace=namespace,
                    )
                )
    return questions
