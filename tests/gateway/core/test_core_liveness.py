from datetime import timedelta

from gateway.core.liveness import dead_reason, split_live
from tests.gateway.core.core_samples import NOW, memory


def test_a_memory_deleted_exactly_at_now_is_dead() -> None:
    exclusion = dead_reason(memory("a", deleted_at=NOW), NOW)
    assert exclusion is not None
    assert exclusion.reason == "deleted"


def test_a_memory_deleted_after_now_is_still_live() -> None:
    assert dead_reason(memory("a", deleted_at=NOW + timedelta(seconds=1)), NOW) is None


def test_superseded_wins_over_deleted_when_a_successor_exists() -> None:
    exclusion = dead_reason(memory("a", deleted_at=NOW - timedelta(days=1), superseded_by="b"), NOW)
    assert exclusion is not None
    assert exclusion.reason == "superseded"
    assert "b" in exclusion.detail


def test_expiry_at_or_before_now_is_expired() -> None:
    expired = dead_reason(memory("a", expires_at=NOW), NOW)
    assert expired is not None
    assert expired.reason == "expired"
    assert dead_reason(memory("a", expires_at=NOW + timedelta(microseconds=1)), NOW) is None


def test_deletion_is_reported_before_expiry() -> None:
    both = memory("a", deleted_at=NOW - timedelta(days=2), expires_at=NOW - timedelta(days=3))
    exclusion = dead_reason(both, NOW)
    assert exclusion is not None
    assert exclusion.reason == "deleted"


def test_split_keeps_input_order_on_both_sides() -> None:
    candidates = [
        memory("c"),
        memory("b", expires_at=NOW - timedelta(days=1)),
        memory("a"),
        memory("d", deleted_at=NOW - timedelta(days=1), superseded_by="e"),
    ]
    split = split_live(candidates, NOW)
    assert [c.memory_id for c in split.live] == ["c", "a"]
    assert [(e.memory_id, e.reason) for e in split.dead] == [
        ("b", "expired"),
        ("d", "superseded"),
    ]
