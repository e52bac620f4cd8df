"""The versions a receipt can name: one resolver, one error, what replay reads of each kind."""

from __future__ import annotations

import pytest

from gateway.core.replacing_turns import FIRST_WEIGHING, SECOND_WEIGHING, WEIGHING
from gateway.core.versions import (
    ADMITTED,
    ASKED,
    ASSEMBLER,
    ASSEMBLERS,
    BUDGET_SIZED,
    CHAT_UPDATES,
    COMPACT,
    CONFLICTS,
    DEFAULT_PROFILE,
    FIRST_SAID,
    LABELS,
    LAYOUT,
    NAMES,
    PARTNERS,
    SESSION_LAYOUTS,
    STATED,
    STATEMENTS,
    WEIGHED,
    UnknownVersionError,
)
from tests.gateway.core.earlier_layouts import EARLIER_LAYOUTS, LAYOUTS


def test_an_assembler_is_resolved_by_its_version_with_every_field_replay_reads() -> None:
    # A receipt names the version that built it; only that version may replay it exactly.
    assert ASSEMBLERS.resolve("assemble/2026-12-06.5") is ASSEMBLER
    assert ASSEMBLERS.resolve("assemble/2026-12-06.4") is FIRST_SAID
    assert ASSEMBLERS.resolve("assemble/2026-12-06.3") is WEIGHED
    assert ASSEMBLERS.resolve("assemble/2026-12-06.1") is CHAT_UPDATES
    assert ASSEMBLERS.resolve("assemble/2026-12-05.4") is STATEMENTS
    assert ASSEMBLERS.resolve("assemble/2026-12-05.3") is NAMES
    assert ASSEMBLERS.resolve("assemble/2026-12-05.2") is ASKED
    assert ASSEMBLERS.resolve("assemble/2026-12-05.1") is STATED
    assert ASSEMBLERS.resolve("assemble/2026-12-04.2") is BUDGET_SIZED
    assert ASSEMBLERS.resolve("assemble/2026-12-04.1") is ADMITTED
    # The versions before are still built: their receipts replay exactly.
    assert ASSEMBLERS.resolve("assemble/2026-12-02.3") is LABELS
    assert ASSEMBLERS.resolve("assemble/2026-12-02.2") is PARTNERS
    assert ASSEMBLERS.resolve("assemble/2026-12-02.1") is CONFLICTS
    assert ASSEMBLERS.resolve("assemble/2026-12-01.1") is COMPACT
    assert len(ASSEMBLERS.by_version) == 14
    # Each rule holds from the version that brought it on, oldest first: ranking what the policy
    # admits alone (2026-12-04.1), the full tier sized by the budget and the index pointing
    # where it stops (.2), the older of two values of one claim left out (2026-12-05.1), the
    # task read as a question (.2), asking which or who (.3), answered by a sentence read whole
    # (.4), an update read as chat says it (2026-12-06.1), and the user's turns nearest the
    # question weighed (.3, .4 and the current .5, each with its own weighing); and a digest
    # retelling only turns in full packed after them (.5).
    flags = list(ASSEMBLERS.by_version.values())
    assert [a.rank_admitted for a in flags] == [False] * 4 + [True] * 10
    assert [a.budget_sized and a.pointing_index for a in flags] == [False] * 5 + [True] * 9
    assert [a.current_values for a in flags] == [False] * 6 + [True] * 8
    assert [a.asked_values for a in flags] == [False] * 7 + [True] * 7
    assert [a.asked_names for a in flags] == [False] * 8 + [True] * 6
    assert [a.asked_statements for a in flags] == [False] * 9 + [True] * 5
    assert [a.asked_updates for a in flags] == [False] * 10 + [True] * 4
    assert [a.said_days for a in flags] == [False] * 10 + [True] * 4
    assert [a.retold_last for a in flags] == [False] * 13 + [True]
    assert [a.weighing for a in flags] == [None] * 11 + [
        FIRST_WEIGHING,
        SECOND_WEIGHING,
        WEIGHING,
    ]
    with pytest.raises(UnknownVersionError, match="unknown assembler version") as raised:
        ASSEMBLERS.resolve("assemble/2026-11-29.1")
    assert (raised.value.kind, raised.value.version) == ("assembler", "assemble/2026-11-29.1")


def test_a_session_layout_is_known_by_its_name_and_its_pinned_rule() -> None:
    # Replay reads nothing of a layout but its name and whether it judges the system prompt and
    # task: the earlier ones keep no other values here.
    assert [SESSION_LAYOUTS.resolve(v) for v in LAYOUTS] == [
        layout.laid_out for layout in LAYOUTS.values()
    ]
    assert [SESSION_LAYOUTS.resolve(v).judges_pinned for v in LAYOUTS] == [False] * 4 + [True]
    assert list(SESSION_LAYOUTS.by_version) == [
        *(e.version for e in EARLIER_LAYOUTS),
        LAYOUT.version,
    ]
    with pytest.raises(UnknownVersionError, match="unknown session layout version") as raised:
        SESSION_LAYOUTS.resolve("session/later")
    assert (raised.value.kind, raised.value.version) == ("session layout", "session/later")
    assert isinstance(raised.value, LookupError)


def test_the_current_versions_are_pinned() -> None:
    # A change to any of them changes the bytes receipts promise: it must be deliberate.
    assert ASSEMBLER.version == "assemble/2026-12-06.5"
    assert LAYOUT.version == "session/2026-12-04.1"
    assert DEFAULT_PROFILE.version == "rank/2026-12-04.1"
    assert DEFAULT_PROFILE.full_tier_cut == 0.2
