import hashlib
import re
from collections.abc import Sequence
from datetime import timedelta
from types import MappingProxyType

import pytest

from gateway.core.assembly import assemble
from gateway.core.model import Candidate, ContextRequest, Exclusion, MemoryId
from gateway.core.outcome import Assembly
from gateway.core.preparation import AssemblyInputError, Found, prepare
from gateway.core.profile import RankingProfile
from gateway.core.render import EMPTY_NAMESPACES, EMPTY_VISIBLE, HEADERS, MORE_UNCOUNTED
from gateway.core.tokens import load_tokenizer
from gateway.core.verdict import ADMIT_ALL, Texts, Verdict, VerdictError
from gateway.core.versions import ADMITTED, ASSEMBLER, DEFAULT_PROFILE, Assembler
from tests.gateway.core.core_samples import NOW, index_of, memory, request, retrieved

TOKENIZER = load_tokenizer()


def run(
    req: ContextRequest,
    candidates: Sequence[Candidate],
    index: Sequence[Candidate] = (),
    total_live: int | None = None,
    verdict: Verdict = ADMIT_ALL,
    profile: RankingProfile = DEFAULT_PROFILE,
    withhold_count: bool = False,
    rewritten: Texts | None = None,
    assembler: Assembler = ASSEMBLER,
) -> Assembly:
    live = (
        total_live if total_live is not None else len({c.memory_id for c in [*candidates, *index]})
    )
    return assemble(
        req,
        candidates,
        index,
        live,
        profile=profile,
        tokenizer=TOKENIZER,
        now=NOW,
        verdict=verdict,
        rewritten=rewritten or {},
        withhold_count=withhold_count,
        assembler=assembler,
    )


def reasons(assembly: Assembly) -> dict[str, str]:
    return {e.memory_id: e.reason for e in assembly.excluded}


RELEVANCE_ONLY = DEFAULT_PROFILE.with_weights("rank/test-no-brevity", brevity=0.0)


def three_with_a_big_middle() -> list[Candidate]:
    return [
        memory("m-a", vector_rank=1, vector_distance=0.05, content="Small first."),
        memory("m-b", vector_rank=2, vector_distance=0.10, content="big " * 3000),
        memory("m-c", vector_rank=3, vector_distance=0.15, content="Small third."),
    ]


def test_skip_continues_past_a_memory_that_does_not_fit() -> None:
    out = run(request(budget_tokens=400, include_index=False), three_with_a_big_middle())
    assert [i.memory_id for i in out.included] == ["m-a", "m-c"]
    assert reasons(out) == {"m-b": "over_budget"}
    assert out.tokens_used <= 400


def test_stop_ends_at_the_first_memory_that_does_not_fit() -> None:
    req = request(budget_tokens=400, include_index=False, fill="stop")
    # Without brevity, so that the big memory keeps its rank (2nd) and is what stops the fill.
    out = run(req, three_with_a_big_middle(), profile=RELEVANCE_ONLY)
    assert [i.memory_id for i in out.included] == ["m-a"]
    assert reasons(out) == {"m-b": "over_budget", "m-c": "over_budget"}
    details = {str(e.memory_id): e.detail for e in out.excluded}
    assert "fill=stop" in details["m-c"]


def test_top_k_cuts_admitted_memories_in_rank_order() -> None:
    out = run(request(top_k=2, include_index=False), retrieved(5))
    assert len(out.included) == 2
    assert [e.reason for e in out.excluded] == ["below_top_k"] * 3
    scores = [i.score_micros for i in out.included]
    assert scores == sorted(scores, reverse=True)


def test_dead_memories_never_reach_the_bundle() -> None:
    dead = [
        memory("d-expired", content="EXPIRED-SECRET", expires_at=NOW, vector_rank=1),
        memory("d-deleted", content="DELETED-SECRET", deleted_at=NOW, vector_rank=2),
        memory(
            "d-super", heading="SUPER-SECRET", deleted_at=NOW, superseded_by="x", lexical_rank=1
        ),
    ]
    out = run(request(), [dead[0], dead[1]], index=[dead[2]], total_live=0)
    assert reasons(out) == {"d-deleted": "deleted", "d-expired": "expired", "d-super": "superseded"}
    assert "SECRET" not in out.bundle
    assert out.bundle.endswith(EMPTY_NAMESPACES)


def test_an_empty_namespace_says_so_plainly() -> None:
    out = run(request(), [], [], total_live=0)
    assert out.bundle == HEADERS[0] + "\n\n" + EMPTY_NAMESPACES
    assert out.included == () and out.excluded == ()
    assert out.index.shown == 0 and out.index.total_live == 0
    assert out.prefix == out.bundle


def test_the_index_is_cut_with_a_more_line_and_the_rest_is_truncated() -> None:
    # As assemblers before 2026-12-04.2 cut an index that does not fit whole: a prefix in index
    # order (test_core_pointing.py: the current one points where the full tier stops).
    entries = index_of([memory(f"i{n:03d}", confidence=0.5 + n / 1000) for n in range(200)])
    out = run(
        request(budget_tokens=800, index_budget_tokens=200),
        [],
        entries,
        total_live=500,
        assembler=ADMITTED,
    )
    assert 0 < out.index.shown < 200
    assert list(out.index.entries) == [e.memory_id for e in entries[: out.index.shown]]
    assert f"…{500 - out.index.shown} more, use search" in out.bundle
    assert out.index.tokens <= 200
    assert {e.reason for e in out.excluded} == {"index_truncated"}
    assert len(out.excluded) == 200 - out.index.shown


def test_room_the_memories_leave_flows_back_to_the_index() -> None:
    entries = index_of([memory(f"i{n:03d}", confidence=0.5 + n / 1000) for n in range(200)])
    big = [memory(f"m{n}", vector_rank=n + 1, content="word " * 250) for n in range(4)]
    # As assemblers before 2026-12-04.2 grow an index that does not fit whole.
    out = run(request(budget_tokens=800, top_k=4), big, entries, total_live=204, assembler=ADMITTED)
    fixed = run(
        request(budget_tokens=800, top_k=4, index_budget_tokens=200),
        big,
        entries,
        204,
        assembler=ADMITTED,
    )
    assert [i.memory_id for i in out.included] == [i.memory_id for i in fixed.included] != []
    assert out.index.shown > fixed.index.shown and out.index.tokens > 200
    assert out.tokens_used <= 800 and out.utilization > fixed.utilization
    assert out.utilization >= 0.95
    # The grown index starts with the lines of the share-sized one (prompt caches keep them).
    assert out.index.entries[: fixed.index.shown] == fixed.index.entries
    assert (
        "grown into the room"
        in {e.detail for e in out.excluded if e.reason == "index_truncated"}.pop()
    )


def test_index_budget_tokens_overrides_the_default_share() -> None:
    entries = index_of([memory(f"i{n:03d}") for n in range(50)])
    small = run(request(index_budget_tokens=100), [], entries)
    large = run(request(index_budget_tokens=1000), [], entries)
    assert small.index.tokens <= 100 < large.index.tokens
    assert small.index.shown < large.index.shown == 50


def test_index_off_truncates_index_only_entries() -> None:
    entries = [memory("i1"), memory("i2")]
    out = run(request(include_index=False), retrieved(1), entries)
    assert out.index.shown == 0
    assert "## Index" not in out.bundle
    assert reasons(out) == {"i1": "index_truncated", "i2": "index_truncated"}


def test_a_memory_in_both_lists_is_handled_once() -> None:
    both = retrieved(3)
    out = run(request(top_k=1), both, index_of(both))
    ids = [e.memory_id for e in out.excluded]
    assert len(ids) == len(set(ids)) == 2
    assert {e.reason for e in out.excluded} == {"below_top_k"}
    assert out.index.shown == 3  # the index still lists them: tier 1 is not tier 2
    # One reference for the memory in both tiers: its index line and its block share it.
    ref = out.included[0].ref
    assert dict(out.refs)[ref] == out.included[0].memory_id
    assert out.bundle.count(f"[{ref} ") == 2
    assert [name for name, _ in out.refs] == ["m1", "m2", "m3"]


def test_header_and_prefix_never_depend_on_the_task() -> None:
    entries = index_of([memory(f"i{n}") for n in range(5)])
    first = run(request(task="UNIQUE-TASK-ONE"), retrieved(3), entries)
    second = run(request(task="UNIQUE-TASK-TWO"), retrieved(6)[3:], entries)
    assert "UNIQUE-TASK" not in first.bundle + second.bundle
    assert first.prefix == second.prefix
    assert first.bundle != second.bundle
    assert first.bundle.startswith(first.prefix) and second.bundle.startswith(second.prefix)
    # Token-level: what a prompt cache sees.
    prefix_tokens = TOKENIZER.encode(first.prefix)
    assert TOKENIZER.encode(first.bundle)[: len(prefix_tokens)] == prefix_tokens
    assert TOKENIZER.encode(second.bundle)[: len(prefix_tokens)] == prefix_tokens


def deny(memory_id: str) -> Exclusion:
    return Exclusion(MemoryId(memory_id), "policy_denied", "rule hr-needs-privileged-role")


def cap(memory_id: str) -> Exclusion:
    return Exclusion(MemoryId(memory_id), "policy_capped", "rule cap-episodic")


def test_the_policy_judges_ranked_candidates_then_live_index_only_entries_once() -> None:
    cands = retrieved(3)
    index = [memory("i-dead", expires_at=NOW), cands[1], memory("i-b"), memory("i-a")]
    found = Found(tuple(cands[::-1]), tuple(index), total_live=6)
    prepared = prepare(request(), found, profile=DEFAULT_PROFILE, now=NOW)
    ranked_ids = [i.memory_id for i in run(request(), cands, index).included]
    assert len(ranked_ids) == 3
    assert [c.memory_id for c in prepared.judged] == [*ranked_ids, "i-b", "i-a"]
    # Without the index, the index-only entries are never judged (nor shown).
    off = prepare(request(include_index=False), found, profile=DEFAULT_PROFILE, now=NOW)
    assert [c.memory_id for c in off.judged] == ranked_ids


def test_denied_memories_vanish_from_index_and_tier_two() -> None:
    cands = [memory("c1", vector_rank=1, heading="HR salary table", content="SALARY-ROW")]
    index = [cands[0], memory("i1", heading="HR review notes")]
    verdict = Verdict(
        denied=MappingProxyType({MemoryId("c1"): deny("c1"), MemoryId("i1"): deny("i1")})
    )
    out = run(request(), cands, index, verdict=verdict)
    assert "HR" not in out.bundle and "SALARY" not in out.bundle
    assert reasons(out) == {"c1": "policy_denied", "i1": "policy_denied"}
    assert out.excluded[0].detail == "rule hr-needs-privileged-role"
    assert out.index.entries == ()


COUNTED_MORE = re.compile(r"…\d+ more, use search")


def under_a_deny(
    req: ContextRequest,
    hidden: int,
    *,
    withhold_count: bool = True,
    assembler: Assembler = ADMITTED,
) -> Assembly:
    """120 listable memories plus ``hidden`` denied ones, with 30 more live beyond the index
    (laid out by `assembler`: by default as before 2026-12-04.2, an index in index order)."""
    allowed = [memory(f"i{n:03d}", confidence=0.5 + n / 1000) for n in range(120)]
    denied = [memory(f"h{n:03d}", namespace="hr", confidence=0.9) for n in range(hidden)]
    verdict = Verdict(denied={d.memory_id: deny(d.memory_id) for d in denied})
    return run(
        req,
        [],
        index_of([*allowed, *denied]),
        total_live=150 + hidden,
        verdict=verdict,
        withhold_count=withhold_count,
        assembler=assembler,
    )


@pytest.mark.parametrize(
    "req",
    [request(budget_tokens=800), request(budget_tokens=800, index_budget_tokens=150)],
    ids=["grown-index", "fixed-share"],
)
def test_a_policy_that_can_deny_gets_an_index_that_states_no_count(req: ContextRequest) -> None:
    # total_live counts the denied memories too: "…N more" would tell how many are hidden.
    outs = [under_a_deny(req, hidden) for hidden in (0, 5, 40)]
    assert len({out.bundle for out in outs}) == 1
    out = outs[0]
    assert out.bundle.count(MORE_UNCOUNTED) == 1 and not COUNTED_MORE.search(out.bundle)
    assert 0 < out.index.shown < 120 and all(o.index.count_withheld for o in outs)
    assert [o.index.total_live for o in outs] == [150, 155, 190]  # the receipt keeps the truth
    assert out.tokens_used == TOKENIZER.count(out.bundle) <= 800
    if req.index_budget_tokens is not None:
        assert out.index.tokens <= req.index_budget_tokens
    # Without withholding, the same bundle but for the count (here the same lines fit).
    counted = under_a_deny(req, 40, withhold_count=False)
    assert not counted.index.count_withheld and counted.index.shown == out.index.shown
    line = f"…{190 - counted.index.shown} more, use search"
    assert counted.bundle.replace(line, MORE_UNCOUNTED) == out.bundle


def test_a_complete_index_has_no_more_line_even_when_the_count_is_withheld() -> None:
    entries = index_of([memory(f"i{n}") for n in range(5)])
    out = run(request(), [], entries, total_live=5, withhold_count=True)
    assert out.index.shown == 5 and out.index.count_withheld
    assert out.bundle == run(request(), [], entries, total_live=5).bundle
    assert "more, use search" not in out.bundle


def _hidden_and_visible(visible: int, hidden: int, req: ContextRequest) -> Assembly:
    """``visible`` listable memories and ``hidden`` denied ones, all fetched (no cut) when the
    request wants the index; without it the store fetches no index and the policy judges none."""
    allowed = [memory(f"i{n:03d}", confidence=0.5) for n in range(visible)]
    denied = [memory(f"h{n:03d}", namespace="hr", confidence=0.9) for n in range(hidden)]
    shown = denied if req.include_index else []
    verdict = Verdict(denied={d.memory_id: deny(d.memory_id) for d in shown})
    return run(
        req,
        [],
        index_of([*allowed, *denied]) if req.include_index else [],
        total_live=visible + hidden,
        verdict=verdict,
        withhold_count=True,
    )


def test_a_withheld_count_leaves_no_more_line_for_hidden_memories_alone() -> None:
    # Every memory the policy lets through is listed: a "more" line would only say hidden ones exist.
    outs = [_hidden_and_visible(5, hidden, request()) for hidden in (0, 1, 12)]
    assert len({out.bundle for out in outs}) == 1
    assert outs[0].index.shown == 5 and "more, use search" not in outs[0].bundle


@pytest.mark.parametrize("include_index", [True, False])
def test_a_withheld_count_makes_nothing_stored_and_everything_denied_look_alike(
    include_index: bool,
) -> None:
    req = request(include_index=include_index)
    outs = [_hidden_and_visible(0, hidden, req) for hidden in (0, 3)]
    assert outs[0].bundle == outs[1].bundle
    if include_index:
        assert outs[0].bundle.endswith(EMPTY_VISIBLE) and EMPTY_NAMESPACES not in outs[0].bundle
    # Without the policy's power to deny, an empty store still says it is empty.
    empty = run(req, [], [], total_live=0)
    assert empty.bundle.endswith(EMPTY_NAMESPACES)


def test_capped_memories_keep_their_index_line_but_leave_tier_two() -> None:
    cands = [memory("c1", vector_rank=1, content="CAPPED-BODY"), memory("c2", vector_rank=2)]
    verdict = Verdict(capped={MemoryId("c1"): cap("c1")})
    out = run(request(top_k=1), cands, index_of(cands), verdict=verdict)
    assert [i.memory_id for i in out.included] == ["c2"]  # c2 moves up into top_k
    assert reasons(out) == {"c1": "policy_capped"}
    assert "c1" in out.index.entries
    assert "CAPPED-BODY" not in out.bundle


def test_rewritten_memories_render_the_redacted_text() -> None:
    cands = [memory("c1", vector_rank=1, heading="Call bob@example.com", content="bob@example.com")]
    texts = {MemoryId("c1"): ("Call [email]", "[email] on call")}
    out = run(request(), cands, cands, rewritten=texts)
    assert "bob@" not in out.bundle
    assert "[m1 semantic .8] Call [email]\n" in out.bundle
    assert "[m1 semantic .8 20261126] Call [email]\n[email] on call" in out.bundle
    (item,) = out.included
    assert item.rewritten and item.content_sha256 == cands[0].content_sha256


@pytest.mark.parametrize(
    ("verdict", "offender"),
    [
        (Verdict(denied={MemoryId("stranger"): deny("stranger")}), "stranger"),
        (Verdict(capped={MemoryId("stranger"): cap("stranger")}), "stranger"),
        (Verdict(denied={MemoryId("c1"): cap("c1")}), "c1"),
        (Verdict(capped={MemoryId("c1"): deny("c1")}), "c1"),
        (Verdict(denied={MemoryId("c1"): deny("other")}), "c1"),
        # Judged only with the index on: here it is an index-only entry of a request without it.
        (Verdict(denied={MemoryId("i1"): deny("i1")}), "i1"),
    ],
    ids=["stranger-denied", "stranger-capped", "cap-as-deny", "deny-as-cap", "filed", "unjudged"],
)
def test_a_malformed_verdict_fails_closed(verdict: Verdict, offender: str) -> None:
    with pytest.raises(VerdictError) as raised:
        run(request(include_index=False), [memory("c1", vector_rank=1)], [memory("i1")], 2, verdict)
    assert raised.value.memory_id == offender


@pytest.mark.parametrize("stray", ["stranger", "i1"], ids=["stranger", "unjudged"])
def test_texts_for_a_memory_not_judged_fail_closed(stray: str) -> None:
    req = request(include_index=False)
    cands, index = [memory("c1", vector_rank=1)], [memory("i1")]
    texts = {MemoryId("c1"): ("Call [email]", "x"), MemoryId(stray): ("h", "c")}
    with pytest.raises(VerdictError) as raised:
        run(req, cands, index, 2, rewritten=texts)
    assert raised.value.memory_id == stray


def test_exact_units_are_kept_beside_the_floats() -> None:
    # The receipt records these, not the floats (`tests/gateway/test_kinds.py`): each memory's
    # score is the sum of its signals in micro-units, utilization in basis points rounded down.
    cands = retrieved(6)
    out = run(request(budget_tokens=500, top_k=3), cands, index_of(cands))
    assert out.utilization_bp == out.tokens_used * 10_000 // 500
    assert out.included
    for item in out.included:
        assert sum(item.signal_micros.values()) == item.score_micros
        assert abs(item.score - item.score_micros / 1_000_000) < 1e-6


def test_accounting_and_hash_of_a_mixed_assembly() -> None:
    cands = [*retrieved(8), memory("dead", deleted_at=NOW - timedelta(days=1), vector_rank=1)]
    index = index_of([*cands[:8], memory("only-1"), memory("only-2", confidence=0.1)])
    out = run(request(budget_tokens=700, top_k=4), cands, index, total_live=30)
    included = {i.memory_id for i in out.included}
    excluded = [e.memory_id for e in out.excluded]
    assert excluded == sorted(excluded) and len(excluded) == len(set(excluded))
    index_only_shown = set(out.index.entries) - {c.memory_id for c in cands}
    everyone = {c.memory_id for c in [*cands, *index]}
    assert included | set(excluded) | index_only_shown == everyone
    assert not included & set(excluded) and not index_only_shown & set(excluded)
    assert out.bundle_sha256 == hashlib.sha256(out.bundle.encode()).hexdigest()
    assert out.tokens_used == TOKENIZER.count(out.bundle) <= 700
    assert out.ranking_profile.digest == DEFAULT_PROFILE.digest


@pytest.mark.parametrize(
    "req",
    [request(budget_tokens=0), request(top_k=-1), request(index_budget_tokens=-5)],
)
def test_impossible_requests_are_refused(req: ContextRequest) -> None:
    with pytest.raises(AssemblyInputError):
        run(req, retrieved(1))


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(AssemblyInputError, match="now"):
        assemble(
            request(),
            [],
            [],
            0,
            profile=DEFAULT_PROFILE,
            tokenizer=TOKENIZER,
            now=NOW.replace(tzinfo=None),
        )
    naive = memory("n")
    naive = Candidate(
        **{
            **{f: getattr(naive, f) for f in naive.__slots__},
            "created_at": NOW.replace(tzinfo=None),
        }
    )
    with pytest.raises(AssemblyInputError, match="naive"):
        run(request(), [naive])
