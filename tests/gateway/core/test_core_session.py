"""The session layout and the extractive summarizer, pure: the exact count never over the
budget (any unicode, `<|endoftext|>` included), the fold plan, summaries within their share,
whole sentences only, and the same bytes in another process."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.core.session import (
    MIN_TURN_ROOM,
    ShownTurn,
    fixed_messages,
    lay_out_session,
    memory_message,
    plan_fold,
    render_text,
    shares,
    summary_message,
)
from gateway.core.summary import EXTRACTIVE, Folded, summarize
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import LAYOUT
from gateway.usecases.disclosure.retrieval import recall_limit
from tests.gateway.core.earlier_layouts import FIRST_LAYOUT, LAYOUTS, WHOLE_TURNS

TOKENIZER = load_tokenizer()
SPECIAL = "<|endoftext|>"
texts = st.one_of(
    st.text(min_size=1, max_size=300),
    st.lists(
        st.sampled_from([SPECIAL, "é", "日本", "🙂", " ", ".", "\n", "a", "?"]), min_size=1
    ).map("".join),
)
roles = st.sampled_from(["user", "assistant", "system", "tool"])


@settings(max_examples=150, deadline=None)
@given(
    turns=st.lists(st.tuples(roles, texts), max_size=12),
    summary=st.none() | texts,
    memory=st.none() | texts,
    system=st.none() | texts,
    task=texts,
    budget=st.integers(min_value=1, max_value=1500),
)
def test_the_exact_count_of_the_text_never_exceeds_the_budget(
    turns: list[tuple[str, str]],
    summary: str | None,
    memory: str | None,
    system: str | None,
    task: str,
    budget: int,
) -> None:
    fixed = fixed_messages(system, task)
    fixed_cost = TOKENIZER.count(render_text(fixed)) + TOKENIZER.count("\n\n")
    summary_msg = None if summary is None else summary_message(summary, 3)
    needed = TOKENIZER.count(render_text([*fixed, *([summary_msg] if summary_msg else [])]))
    if needed > budget:
        return  # the use case refuses such a budget (422 with the minimum) before laying out
    shown = [ShownTurn(i + 1, f"t{i}", r, None, t) for i, (r, t) in enumerate(turns)]
    laid = lay_out_session(
        fixed,
        summary_msg,
        None if memory is None else memory_message(memory),
        shown,
        budget,
        TOKENIZER,
    )
    assert laid.tokens == TOKENIZER.count(laid.text) <= budget
    assert laid.text == render_text(laid.messages)
    # Only whole turns are dropped, oldest first; the newest kept are a suffix.
    assert list(laid.dropped) + list(laid.turns) == shown
    if shares(budget, fixed_cost, 0) is None:
        assert budget < fixed_cost + MIN_TURN_ROOM


@settings(max_examples=100, deadline=None)
@given(
    costs=st.lists(st.integers(0, 400), max_size=30),
    share=st.integers(1, 2000),
    keep=st.integers(0, 5),
)
def test_the_fold_plan_leaves_a_tail_within_the_share(
    costs: list[int], share: int, keep: int
) -> None:
    folded = plan_fold(costs, share, keep)
    assert 0 <= folded <= len(costs)
    assert sum(costs[folded:]) <= share
    if sum(costs) <= share:
        assert folded == 0
    elif folded > max(0, len(costs) - keep):
        # keep_last was given up only because those turns alone did not fit.
        assert sum(costs[max(0, len(costs) - keep) :]) > share


@settings(max_examples=100, deadline=None)
@given(
    turns=st.lists(st.tuples(roles, texts), max_size=10),
    previous=st.none() | texts,
    share=st.integers(0, 300),
)
def test_a_summary_fits_its_share_and_keeps_only_whole_sentences(
    turns: list[tuple[str, str]], previous: str | None, share: int
) -> None:
    folded = [Folded(i + 1, r, t) for i, (r, t) in enumerate(turns)]
    text = summarize(previous, folded, share, TOKENIZER)
    assert TOKENIZER.count(text) <= share
    for line in filter(None, text.splitlines()):
        assert line.startswith("- t")
    # Folding a summary again within the same share keeps it within the share.
    again = summarize(text, [], share, TOKENIZER)
    assert TOKENIZER.count(again) <= share


def test_the_summary_keeps_what_matters_and_drops_chatter() -> None:
    turns = [
        Folded(1, "user", "Hello! How are you today? I am fine."),
        Folded(2, "assistant", "Great to hear. Sounds good."),
        Folded(3, "user", "We decided to fly with TAP on 3 May, flight TP1351."),
        Folded(4, "assistant", "Noted. Should I book the hotel near Alfama?"),
        Folded(5, "user", "We decided to fly with TAP on 3 May, flight TP1351."),
    ]
    text = summarize(None, turns, 40, TOKENIZER)
    assert "- t5 user: We decided to fly with TAP on 3 May, flight TP1351." in text
    assert text.count("TP1351") == 1  # deduplicated, the latest kept
    assert "Sounds good" not in text


def test_a_title_a_decimal_or_an_abbreviation_ends_no_sentence_of_the_summary() -> None:
    """extractive/2026-12-06.1 splits as the extractor does, each line apart: 2026-12-01.1 cut
    "I saw Dr." from "Okafor", "3." from "5 miles"."""
    assert EXTRACTIVE == ("extractive", "2026-12-06.1")
    turns = [
        Folded(1, "user", "I saw Dr. Okafor yesterday. She said 3.5 miles a day is fine!"),
        Folded(2, "user", "Rent is $1,650.50 now, e.g. with parking.\n- the lease ends in May"),
    ]
    text = summarize(None, turns, 200, TOKENIZER)
    assert text.splitlines() == [
        "- t1 user: I saw Dr. Okafor yesterday.",
        "- t1 user: She said 3.5 miles a day is fine!",
        "- t2 user: Rent is $1,650.50 now, e.g. with parking.",
        "- t2 user: - the lease ends in May",
    ]


_SCRIPT = """
import json
from gateway.core.session import ShownTurn, fixed_messages, lay_out_session, summary_message
from gateway.core.summary import Folded, summarize
from gateway.core.tokens import load_tokenizer
tokenizer = load_tokenizer()
turns = [Folded(i, "user", f"On day {i} we agreed to meet Ana at {i}:00 in Porto.") for i in range(40)]
summary = summarize("- t0 user: We will travel in May.", turns, 120, tokenizer)
shown = [ShownTurn(40 + i, f"t{i}", "assistant", None, f"Reply {i} <|endoftext|> é") for i in range(5)]
laid = lay_out_session(
    fixed_messages("Be brief.", "Plan the trip"), summary_message(summary, 39), None, shown, 300,
    tokenizer,
)
print(json.dumps([summary, laid.text]))
"""


def test_the_summary_and_the_layout_are_the_same_bytes_in_another_process() -> None:
    """No salted hash, set or dict order reaches the bytes: two processes with different hash
    seeds agree."""
    runs = [
        subprocess.run(
            [sys.executable, "-c", _SCRIPT],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "4242")
    ]
    assert runs[0] == runs[1]
    summary, text = json.loads(runs[0])
    assert summary.count("\n") >= 2 and text.startswith("system: Be brief.")


@settings(max_examples=100, deadline=None)
@given(budget=st.integers(0, 20_000), fixed=st.integers(0, 500), memory=st.integers(0, 20_000))
def test_the_shares_add_up_to_the_budget_in_every_layout(
    budget: int, fixed: int, memory: int
) -> None:
    for layout in LAYOUTS.values():
        cut = shares(budget, fixed, memory, layout)
        if cut is None:
            assert budget - fixed < MIN_TURN_ROOM
            continue
        assert cut.fixed + cut.memory + cut.summary + cut.turns == budget
        assert min(cut.memory, cut.summary) >= 0 and cut.turns >= MIN_TURN_ROOM // 2


def test_a_recalling_step_gives_the_summary_a_sixth_and_the_memory_bundle_no_index() -> None:
    recalling = shares(2000, 25, 500)
    alone = shares(2000, 25, 0)
    first = shares(2000, 25, 500, FIRST_LAYOUT)
    assert recalling is not None and alone is not None and first is not None
    assert (recalling.summary, recalling.turns) == (1475 // 6, 1475 - 1475 // 6)
    # Without recall the summary is the only way back to older turns: it keeps its third.
    assert (alone.summary, first.summary) == (1975 // 3, 1475 // 3)
    assert not LAYOUT.memory_index and FIRST_LAYOUT.memory_index
    # The room the index had goes to more memories in full than the six of the layouts before.
    assert LAYOUT.memory_top_k > WHOLE_TURNS.memory_top_k == FIRST_LAYOUT.memory_top_k == 6
    # Its retrievers return fewer than a six-memory bundle's, which the layouts before
    # 2026-12-03.1 kept.
    depths = [layout.recall_depth for layout in LAYOUTS.values()]
    assert depths == [recall_limit(6)] * 3 + [32, 32] and recall_limit(6) > 32
