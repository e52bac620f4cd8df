"""The knowledge bench's score: a stale value anywhere counts against clean; beside it, whether
the stale value is only where the current value is stated too (the value replaced, named)."""

from __future__ import annotations

from bench.knowledge import Case, score

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
