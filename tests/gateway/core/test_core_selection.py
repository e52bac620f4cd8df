"""Selecting what may be shown, then laying it out with the policy's texts: `select` names exactly
the memories the bundle may render (index lines by heading, tier-2 blocks in full), `lay_out`
renders the texts it is given for those and refuses texts for any other memory, and the one-call
`assemble` builds the bytes of the stages, using only the texts of memories the selection shows."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest

from gateway.core.assembly import assemble
from gateway.core.bundle import lay_out
from gateway.core.model import Candidate, ContextRequest, Exclusion, MemoryId
from gateway.core.outcome import Assembly
from gateway.core.preparation import Found, prepare
from gateway.core.render import index_line, memory_block
from gateway.core.selection import Selection, select
from gateway.core.tokens import load_tokenizer
from gateway.core.verdict import ADMIT_ALL, Texts, Verdict, VerdictError
from gateway.core.versions import ADMITTED, ASSEMBLER, DEFAULT_PROFILE, Assembler
from tests.gateway.core.core_samples import NOW, index_of, memory, request

TOKENIZER = load_tokenizer()


def verdict(*, denied: Sequence[str] = (), capped: Sequence[str] = ()) -> Verdict:
    return Verdict(
        denied={MemoryId(m): Exclusion(MemoryId(m), "policy_denied", "rule no-hr") for m in denied},
        capped={
            MemoryId(m): Exclusion(MemoryId(m), "policy_capped", "rule cap-episodic")
            for m in capped
        },
    )


def scene() -> tuple[list[Candidate], list[Candidate]]:
    """Six retrieval candidates (r0 ranks first) and an index of them plus three index-only
    entries, one of them dead. Every text names an email address."""
    retrieved = [
        memory(
            f"r{n}",
            heading=f"Ask r{n}@example.com",
            content=f"Mail r{n}@example.com about step {n}.",
            confidence=0.6 + n / 100,
            vector_rank=n + 1,
            vector_distance=0.05 + n / 20,
        )
        for n in range(6)
    ]
    index_only = [
        memory("i-a", heading="Index a@example.com", content="Body of a@example.com."),
        memory("i-b", heading="Index b@example.com", content="Body of b@example.com."),
        memory("i-dead", heading="Gone", deleted_at=NOW - timedelta(hours=1)),
    ]
    return retrieved, index_of([*retrieved, *index_only])


def selection(
    req: ContextRequest, judged: Verdict = ADMIT_ALL, assembler: Assembler = ASSEMBLER
) -> Selection:
    retrieved, index = scene()
    found = Found(tuple(retrieved), tuple(index), total_live=len(index) + 5)
    return select(prepare(req, found, profile=DEFAULT_PROFILE, now=NOW), judged, assembler)


def run(
    req: ContextRequest,
    judged: Verdict = ADMIT_ALL,
    rewritten: Texts | None = None,
    *,
    withhold_count: bool = False,
) -> Assembly:
    retrieved, index = scene()
    return assemble(
        req,
        retrieved,
        index,
        total_live=len(index) + 5,
        profile=DEFAULT_PROFILE,
        tokenizer=TOKENIZER,
        now=NOW,
        verdict=judged,
        rewritten=rewritten or {},
        withhold_count=withhold_count,
    )


def test_the_selection_names_the_index_members_and_the_top() -> None:
    # r1 is capped (out of tier 2, keeps its line), i-b denied (neither), i-dead is dead. As
    # assemblers before 2026-12-04.2 list an index that does not fit whole: in index order.
    chosen = selection(
        request(budget_tokens=4000, top_k=2),
        verdict(denied=["i-b"], capped=["r1"]),
        ADMITTED,
    )
    _, index = scene()
    # Every live, undenied index entry, in index order: capped and beyond-top_k ones too.
    assert list(chosen.headings) == [
        c.memory_id for c in index if c.memory_id not in ("i-b", "i-dead")
    ]
    assert set(chosen.headings) == {"r0", "r1", "r2", "r3", "r4", "r5", "i-a"}
    # Tier 2: the admitted top_k in rank order, never the capped one.
    assert chosen.full == ("r0", "r2")
    expected = {
        "r1": "policy_capped",
        "r3": "below_top_k",
        "r4": "below_top_k",
        "r5": "below_top_k",
        "i-b": "policy_denied",
        "i-dead": "deleted",
    }
    assert {m: e.reason for m, e in chosen.excluded.items()} == expected
    # Nothing recalled but not shown may be shown in full.
    assert not {"r1", "r3", "r4", "r5", "i-a", "i-b"} & set(chosen.full)
    out = lay_out(chosen, {}, tokenizer=TOKENIZER, assembler=ADMITTED)
    assert [i.memory_id for i in out.included] == list(chosen.full)
    assert {e.memory_id: e.reason for e in out.excluded} == expected
    assert out.index.entries == chosen.headings


def test_without_the_index_only_the_top_may_be_shown() -> None:
    chosen = selection(request(budget_tokens=4000, top_k=3, include_index=False))
    assert chosen.headings == ()
    assert chosen.full == ("r0", "r1", "r2")
    out = lay_out(chosen, {}, tokenizer=TOKENIZER)
    assert [i.memory_id for i in out.included] == ["r0", "r1", "r2"]


def test_lay_out_renders_exactly_the_texts_it_is_given() -> None:
    texts = {
        MemoryId("r0"): ("Ask [email]", "Mail [email] about step 0."),
        MemoryId("r3"): ("Ask [email] (r3)", ""),  # beyond top_k: its index line only
        MemoryId("i-a"): ("Index [email]", ""),
    }
    chosen = selection(request(budget_tokens=4000, top_k=2), ADMIT_ALL, ADMITTED)
    out = lay_out(chosen, texts, tokenizer=TOKENIZER, assembler=ADMITTED)
    retrieved, index = scene()
    by_id: dict[str, Candidate] = {c.memory_id: c for c in [*retrieved, *index]}
    bundle = out.bundle
    ref: dict[str, str] = {memory_id: r for r, memory_id in out.refs}
    # Rewritten headings in the index lines, rewritten heading and content in the block.
    assert index_line(ref["r0"], by_id["r0"], "Ask [email]") + "\n" in bundle
    assert index_line(ref["r3"], by_id["r3"], "Ask [email] (r3)") + "\n" in bundle
    assert index_line(ref["i-a"], by_id["i-a"], "Index [email]") + "\n" in bundle
    assert (
        memory_block(
            ref["r0"], by_id["r0"], "Ask [email]", "Mail [email] about step 0.", labels=True
        )
        in bundle
    )
    for gone in ("r0@", "r3@", "a@example.com"):
        assert gone not in bundle
    # What the texts do not name is rendered as stored.
    assert (
        memory_block(ref["r1"], by_id["r1"], by_id["r1"].heading, by_id["r1"].content, labels=True)
        in bundle
    )
    assert index_line(ref["i-b"], by_id["i-b"], "Index b@example.com") in bundle
    assert set(out.index.entries) == {c.memory_id for c in index if c.memory_id != "i-dead"}
    flags = {i.memory_id: i.rewritten for i in out.included}
    assert flags == {"r0": True, "r1": False}
    (r0,) = (i for i in out.included if i.memory_id == "r0")
    assert r0.content_sha256 == by_id["r0"].content_sha256  # the stored version's hash
    assert r0.tokens == TOKENIZER.count(
        memory_block(
            ref["r0"], by_id["r0"], "Ask [email]", "Mail [email] about step 0.", labels=True
        )
    )
    # Without the texts, the stored ones are rendered.
    assert "r0@example.com" in lay_out(chosen, {}, tokenizer=TOKENIZER).bundle


@pytest.mark.parametrize(
    ("stray", "req"),
    [
        ("stranger", request(budget_tokens=4000, top_k=2)),  # never judged
        ("i-b", request(budget_tokens=4000, top_k=2)),  # judged, but denied: not shown
        ("i-dead", request(budget_tokens=4000, top_k=2)),  # dead: never judged
        ("r4", request(budget_tokens=4000, top_k=2, include_index=False)),  # below top_k
    ],
    ids=["stranger", "denied", "dead", "below-top-k-without-index"],
)
def test_texts_for_a_memory_not_shown_fail_closed(stray: str, req: ContextRequest) -> None:
    # i-b is judged only with the index on.
    chosen = selection(req, verdict(denied=["i-b"] if req.include_index else []))
    assert stray not in {*chosen.headings, *chosen.full}
    with pytest.raises(VerdictError) as raised:
        lay_out(chosen, {MemoryId(stray): ("h", "c")}, tokenizer=TOKENIZER)
    assert raised.value.memory_id == stray


def test_a_stray_text_fails_closed_even_beside_good_ones() -> None:
    chosen = selection(request(budget_tokens=4000, top_k=2))
    texts = {MemoryId("r0"): ("Ask [email]", "x"), MemoryId("zz"): ("h", "c")}
    with pytest.raises(VerdictError, match="zz"):
        lay_out(chosen, texts, tokenizer=TOKENIZER)


def test_assemble_refuses_texts_of_a_memory_not_judged() -> None:
    for stray in ("stranger", "i-dead"):
        with pytest.raises(VerdictError) as raised:
            run(request(), rewritten={MemoryId("r0"): ("h", "c"), MemoryId(stray): ("h", "c")})
        assert raised.value.memory_id == stray
    # An index-only entry is judged only with the index on.
    with pytest.raises(VerdictError, match="i-a"):
        run(request(include_index=False), rewritten={MemoryId("i-a"): ("h", "c")})


TEXTS: Texts = {
    MemoryId("r0"): ("Ask [email]", "Mail [email] about step 0."),
    MemoryId("r1"): ("Ask [email] (one)", "Mail [email], a longer rewrite of step 1 " * 3),
    MemoryId("r4"): ("Ask [email] (r4)", ""),
    MemoryId("i-a"): ("Index [email]", ""),
}
# Judged but never shown: denied (i-b) or, without the index, capped or below top_k.
UNSHOWN: Texts = {
    MemoryId("i-b"): ("LEAKED-HEADING", "LEAKED-CONTENT"),
    MemoryId("r2"): ("LEAKED-HEADING", "LEAKED-CONTENT"),
    MemoryId("r5"): ("LEAKED-HEADING", "LEAKED-CONTENT"),
}


@pytest.mark.parametrize("withhold_count", [False, True])
@pytest.mark.parametrize(
    "req",
    [
        request(budget_tokens=4000, top_k=3),
        request(budget_tokens=160, top_k=3),  # tight: over_budget and a truncated index
        request(budget_tokens=4000, top_k=3, include_index=False),
        request(budget_tokens=4000, top_k=2, fill="stop", index_budget_tokens=40),
    ],
    ids=["roomy", "tight", "no-index", "fixed-share"],
)
def test_assemble_builds_the_bytes_of_the_stages(withhold_count: bool, req: ContextRequest) -> None:
    if req.include_index:
        judged = verdict(denied=["i-b"], capped=["r2"])
        given = {**TEXTS, MemoryId("i-b"): UNSHOWN[MemoryId("i-b")]}
    else:  # the index-only entries are not judged, and no index line is rendered
        judged = verdict(capped=["r2"])
        given = {
            **{m: t for m, t in TEXTS.items() if m in ("r0", "r1", "r4")},
            MemoryId("r2"): UNSHOWN[MemoryId("r2")],
            MemoryId("r5"): UNSHOWN[MemoryId("r5")],
        }
    chosen = selection(req, judged)
    shown = {*chosen.headings, *chosen.full}
    texts = {m: t for m, t in given.items() if m in shown}
    assert texts and len(texts) < len(given)  # some texts are used, some left out
    staged = lay_out(chosen, texts, tokenizer=TOKENIZER, withhold_count=withhold_count)
    one_call = run(req, judged, given, withhold_count=withhold_count)
    assert one_call.bundle.encode("utf-8") == staged.bundle.encode("utf-8")
    assert one_call.bundle_sha256 == staged.bundle_sha256
    assert one_call == staged
    assert "LEAKED" not in one_call.bundle
    assert "r0@" not in one_call.bundle  # the shown texts are rewritten


def test_the_tight_budget_really_leaves_memories_out() -> None:
    # Guards the "tight" case above: it exercises over_budget and a truncated index.
    out = run(request(budget_tokens=160, top_k=3), rewritten=TEXTS)
    reasons = {e.reason for e in out.excluded}
    assert "over_budget" in reasons or "index_truncated" in reasons
