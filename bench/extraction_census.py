"""What the rules extractor reads of knowledge-update cases, without a gateway: per update case,
whether any fact it extracts from the case's turns holds the old value, any the new one, and
whether two such facts share a claim key (then compile can supersede the old by the new).

The instrument behind "why the blind figure is low" in bench/RESULTS.md: on the hand-written dev
set, whose patterns were written reading it, the extractor reads nine statements in ten; on
cases written blind, far fewer. Default sets: the dev set and every blind set in `bench/`;
``--cases PATH`` (repeatable) names others of the same format.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bench.harness import markdown_table, write_result
from bench.knowledge import DATASET, Case, load_cases
from gateway.core.extraction import Episode, Fact, extract

_HERE = Path(__file__).parent
# Every blind set, in the order they were written ("blind", then "blind2", ...).
SETS = (
    DATASET,
    *sorted(
        _HERE.glob("knowledge_updates_blind*.json"),
        key=lambda path: int(path.stem.removeprefix("knowledge_updates_blind") or 1),
    ),
)


def _episodes(case: Case) -> list[Episode]:
    return [
        Episode(
            (f"{session['session_id']}.{index}",),
            turn["role"],
            turn["content"],
            datetime.fromisoformat(session["date"]).replace(tzinfo=UTC),
        )
        for session in case.sessions
        for index, turn in enumerate(session["turns"])
    ]


def _holding(facts: Sequence[Fact], value: str) -> set[str | None]:
    """The claim keys of the facts whose value is, or holds, `value` (either way round)."""
    value = value.casefold()
    return {
        f.claim_key
        for f in facts
        if f.value and (value in f.value.casefold() or f.value.casefold() in value)
    }


def census(cases: Sequence[Case]) -> list[int]:
    """Update cases, and of them: the old value read, the new value read, both on one key."""
    counts = [0, 0, 0, 0]
    for case in cases:
        if not case.stale:
            continue  # a no-update case has no change to read
        facts = extract(_episodes(case))
        old, new = _holding(facts, case.stale), _holding(facts, case.gold)
        counts[0] += 1
        counts[1] += bool(old)
        counts[2] += bool(new)
        counts[3] += bool((old & new) - {None})
    return counts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench census", description=__doc__)
    parser.add_argument("--cases", type=Path, action="append", help="a case file (repeatable)")
    args = parser.parse_args(argv)
    rows: list[list[object]] = []
    for path in args.cases or SETS:
        rows.append([path.name, *census(load_cases(path))])
    header = ["set", "update cases", "old value read", "new value read", "one claim key"]
    print(markdown_table(header, rows))
    print("written", write_result("census", {"rows": rows}))
    return 0
