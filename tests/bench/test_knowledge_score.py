"""The knowledge bench's score: a stale value anywhere counts against clean; beside it, whether
the stale value is only where the current value is stated too (the value replaced, named). And a
case's stable reading: the case had its value never changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.knowledge import Case, load_cases, score, stable

CASE = Case("c1", "categorical", (), "What car am I driving these days?", "Outback", "Civic")
OLD = "[m1 episodic .6 20240113] user, turn 1\nMy 2016 Honda Civic squeaks."
NEW = "[m2 episodic .6 20240224] user, turn 1\nTraded in the Civic, drove home in a Subaru Outback."
OTHER = "[m3 episodic .6 20240301] user, turn 3\nSomething else entirely."


def test_a_stale_value_only_beside_the_current_one_is_told_apart() -> None:
    assert score(CASE, "\n\n".join((NEW, OTHER))) == {
        "gold": True, "stale": True, "clean": False, "stale_beside": True,
    }  # fmt: skip
    assert score(CASE, "\n\n".join((OLD, NEW)))["stale_beside"] is False
    assert score(CASE, OLD) == {"gold": False, "stale": True, "clean": False, "stale_beside": False}
    assert score(CASE, "\n".join((NEW.replace("the Civic", "it"), OTHER)))["clean"] is True


def test_every_case_file_in_bench_reads_as_cases_of_the_dev_format() -> None:
    # The blind sets are data written elsewhere: each must load, name its values where it
    # says they are, and keep its ids apart from the other sets'.
    seen: set[str] = set()
    bench = Path(__file__).resolve().parents[2] / "bench"
    # Fold C (knowledge_updates_lme_c.json) annotates LongMemEval questions: another format.
    for path in sorted(p for p in bench.glob("knowledge_updates_*.json") if "lme" not in p.name):
        cases = load_cases(path)
        assert cases, path
        for case in cases:
            assert case.case_id not in seen
            seen.add(case.case_id)
            said = " ".join(t["content"] for s in case.sessions for t in s["turns"]).casefold()
            assert case.gold.casefold() in said, case.case_id
            assert (case.stale == "") == (case.category == "no_update"), case.case_id
            assert not case.stale or case.stale.casefold() in said, case.case_id


def _said(*turns: tuple[str, str], day: str = "2024-01-13") -> dict[str, Any]:
    return {"session_id": day, "date": day, "turns": [{"role": r, "content": c} for r, c in turns]}


def test_a_stable_reading_leaves_out_what_says_the_current_value_and_the_reply_to_it() -> None:
    first = _said(("user", "My 2016 Honda Civic squeaks."), ("assistant", "Check the belts."))
    later = _said(
        ("user", "Traded in the Civic, drove home in a Subaru Outback."),
        ("assistant", "Congratulations on the new car!"),  # the reply to the update: out
        ("user", "How often should I rotate tires?"),
        ("assistant", "Every 5,000 miles; the Outback manual says the same."),  # says it: out
        ("assistant", "Anything else?"),  # not a reply to a user's turn left out: kept
        day="2024-02-24",
    )
    case = Case("c1", "categorical", (first, later), CASE.question, "Outback", "Civic")
    read = stable(case)
    assert read is not None
    assert (read.case_id, read.gold, read.stale) == ("c1_stable", "Civic", "")
    assert read.sessions[0] == first
    assert [t["content"] for t in read.sessions[1]["turns"]] == [
        "How often should I rotate tires?",
        "Anything else?",
    ]
    # A session left with no turn is dropped; a case without a stale value has no stable
    # reading, nor one whose stale value only the update says.
    update = _said(("user", "Subaru Outback now."), day="2024-02-24")
    alone = stable(Case("c2", "categorical", (first, update), CASE.question, "Outback", "Civic"))
    assert alone is not None and alone.sessions == (first,)
    assert stable(Case("c3", "no_update", (first,), CASE.question, "Civic", "")) is None
    only_update = Case("c4", "categorical", (later,), CASE.question, "Outback", "Civic")
    assert stable(only_update) is None
