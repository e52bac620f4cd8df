"""The compact rendering: per-bundle references, one short provenance line, no repeated heading."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from gateway.core.model import MemoryId
from gateway.core.render import (
    SEPARATOR,
    bundle_refs,
    heading_repeats_content,
    index_line,
    memory_block,
    shown_heading,
)
from gateway.core.tokens import load_tokenizer
from tests.gateway.core.core_samples import memory

TOKENIZER = load_tokenizer()
TURN = "[1:56 pm on 8 May, 2023] Caroline: Hey Mel! Good to see you! How have you been lately?"


@pytest.mark.parametrize(
    ("heading", "content", "repeats"),
    [
        ("Hey Mel! Good to see you!", TURN, True),  # after a turn's date and speaker stamp
        ("Hey   Mel!\nGood to see you!", TURN, True),  # whitespace is folded on both sides
        ("Hey Mel! Good to see…", TURN, True),  # a truncated heading marks itself
        ("Deploys need the migration flag", "Deploys need the migration flag.", True),
        ("Staging deploys", "Deploys to staging need the migration flag.", False),
        ("How have you been lately?", "x" * 200 + TURN, False),  # not at the start
        ("", "anything", True),
    ],
)
def test_a_heading_is_dropped_only_when_it_repeats_the_start(
    heading: str, content: str, repeats: bool
) -> None:
    assert heading_repeats_content(heading, content) is repeats


def test_the_block_is_one_provenance_line_then_the_content() -> None:
    c = memory("c1", memory_type="episodic", confidence=0.85, created_days_ago=3.0)
    assert memory_block("m3", c, "Hey Mel! Good to see you!", TURN, labels=True) == (
        f"[m3 episodic .85 20261126]\n{TURN}"
    )
    # A heading that says something else stays, on the provenance line, folded to one line.
    assert memory_block("m3", c, "Greeting\nfrom Caroline", TURN, labels=True) == (
        f"[m3 episodic .85 20261126] Greeting from Caroline\n{TURN}"
    )


def test_the_block_shows_the_day_it_was_said_under_said_days() -> None:
    """A remembered turn of an imported history was written today and said long ago: the
    assemblers from 2026-12-06.1 show the day it was said (`valid_from`), the earlier ones
    the day it was written; a memory without one shows the day it was written under both."""
    written = memory("c1", memory_type="episodic", confidence=0.85, created_days_ago=3.0)
    said = dataclasses.replace(written, valid_from=datetime(2023, 5, 8, 13, 56, tzinfo=UTC))
    assert memory_block("m3", said, "", TURN, labels=True, said_day=True).startswith(
        "[m3 episodic .85 20230508]\n"
    )
    assert memory_block("m3", said, "", TURN, labels=True).startswith(
        "[m3 episodic .85 20261126]\n"
    )
    assert memory_block("m3", written, "", TURN, labels=True, said_day=True).startswith(
        "[m3 episodic .85 20261126]\n"
    )


SAID = "I've been really into soups lately. I just made a big batch of lentil soup."


@pytest.mark.parametrize(
    ("heading", "labels", "shown"),
    [
        # A remembered turn: who and when stay, the opening words are in the content anyway.
        ("user, turn 318: I've been really into soups lately. I just…", True, "user, turn 318"),
        ("user, turn 318: I've been really into soups lately. I just…", False, None),
        ("Decision: I've been   really into soups", True, "Decision"),
        ("Soups: lentil and squash", True, None),  # its words are not the content's start
        (": I've been really into soups", True, None),  # no label to keep
        ("I've been really into soups lately.", True, ""),  # repeats the start: nothing shown
    ],
)
def test_a_heading_label_stands_alone_when_its_words_open_the_content(
    heading: str, labels: bool, shown: str | None
) -> None:
    # None: the heading as written, folded to one line.
    assert shown_heading(heading, SAID, labels=labels) == (
        " ".join(heading.split()) if shown is None else shown
    )


@pytest.mark.parametrize(("value", "text"), [(1.0, "1"), (0.0, "0"), (0.8, ".8"), (0.05, ".05")])
def test_confidence_is_written_short(value: float, text: str) -> None:
    line = index_line("m1", memory("c1", confidence=value), "h")
    assert line == f"[m1 semantic {text}] h"


def test_framing_stays_within_the_targets() -> None:
    # Targets of issue 15: at most 12 tokens of framing per memory in full, 8 per index line
    # (the ULID rendering spent ~78), counted as the bundle counts them: with their separators.
    for memory_type in ("semantic", "episodic", "procedural", "working"):
        for ref in ("m3", "m42", "m317"):
            c = memory("c1", memory_type=memory_type, confidence=0.85)
            block = memory_block(ref, c, "Hey Mel!", TURN, labels=True)
            assert TOKENIZER.count(SEPARATOR + block) - TOKENIZER.count(TURN) <= 12
            heading = "Deploys to staging need the migration flag"
            line = index_line(ref, c, heading)
            assert TOKENIZER.count("\n" + line) - TOKENIZER.count(heading) <= 8


def test_references_number_the_index_first_and_keep_one_name_per_memory() -> None:
    ids = [MemoryId(x) for x in ("a", "b", "c", "d")]
    refs = bundle_refs(ids[:2], [ids[3], ids[1], ids[2]])
    assert refs == {ids[0]: "m1", ids[1]: "m2", ids[3]: "m3", ids[2]: "m4"}
