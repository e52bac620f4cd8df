"""The extraction census: an update case counts what the extractor read of it."""

from __future__ import annotations

from bench.extraction_census import census
from bench.knowledge import Case


def _case(case_id: str, newer: str, stale: str) -> Case:
    sessions = (
        {"session_id": "s1", "date": "2024-01-08", "turns": [{"role": "user", "content": "I weigh 185 pounds."}]},
        {"session_id": "s2", "date": "2024-03-02", "turns": [{"role": "user", "content": newer}]},
    )  # fmt: skip
    return Case(case_id, "numeric", sessions, "How much do I weigh?", "172 pounds", stale)


def test_a_change_read_on_one_key_counts_in_every_column() -> None:
    read = _case("read", "Three months of training and I'm down to 172 pounds now.", "185 pounds")
    unread = _case("unread", "Scale says one seven two these days, wild.", "185 pounds")
    no_update = _case("same", "How do I keep the weight off?", "")
    assert census([read]) == [1, 1, 1, 1]
    assert census([unread]) == [1, 1, 0, 0]
    assert census([read, unread, no_update]) == [2, 2, 1, 1]
