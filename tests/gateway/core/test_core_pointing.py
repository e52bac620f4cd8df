"""What an agent gets by naming only a budget (assembler 2026-12-04.2): a full tier sized by the
budget and the ranking profile's relevance cut, and an index that, when the namespace's does not
fit its share whole, points where the full tier stops. Pure core, exact token counts."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import pytest

from gateway.core.assembly import assemble
from gateway.core.fill import fill_tail
from gateway.core.model import Candidate, ContextRequest, Exclusion
from gateway.core.outcome import Assembly
from gateway.core.profile import RankingProfile
from gateway.core.render import SEPARATOR, more_line
from gateway.core.selection import SelectionError
from gateway.core.tokens import load_tokenizer
from gateway.core.verdict import ADMIT_ALL, Verdict
from gateway.core.versions import ADMITTED, ASSEMBLER, DEFAULT_PROFILE, Assembler
from tests.gateway.core.core_samples import NOW, index_of, memory, request

TOKENIZER = load_tokenizer()
NO_CUT = dataclasses.replace(DEFAULT_PROFILE, version="rank/test-no-cut", full_tier_cut=None)
POINTING_MORE = re.compile(r"…(\d+) more: search for them, or fetch a ref above in full$")


def turns(count: int, *, words: int = 12) -> list[Candidate]:
    """Short conversation turns found by both retrievers, the first the best match."""
    return [
        memory(
            f"01JT{n:022d}",
            heading=f"user, turn {n}",
            content=" ".join(f"word{n}x{w}" for w in range(words)),
            memory_type="episodic",
            vector_rank=n + 1,
            vector_distance=0.2 + n / 400,
            lexical_rank=n + 1,
            lexical_score=1.0 / (n + 1),
        )
        for n in range(count)
    ]


def run(
    req: ContextRequest,
    candidates: Sequence[Candidate],
    index: Sequence[Candidate] = (),
    total_live: int | None = None,
    *,
    profile: RankingProfile = NO_CUT,
    verdict: Verdict = ADMIT_ALL,
    withhold_count: bool = False,
    assembler: Assembler = ASSEMBLER,
) -> Assembly:
    live = len({c.memory_id for c in [*candidates, *index]}) if total_live is None else total_live
    return assemble(
        req,
        candidates,
        index,
        live,
        profile=profile,
        tokenizer=TOKENIZER,
        now=NOW,
        verdict=verdict,
        withhold_count=withhold_count,
        assembler=assembler,
    )


def test_with_no_top_k_the_full_tier_fills_the_budget_in_rank_order() -> None:
    pool = turns(120)
    out = run(request(budget_tokens=800, top_k=None, include_index=False), pool)
    shown = [i.memory_id for i in out.included]
    # Far more than the six a top_k-less request got before, best first, and the budget used.
    assert len(shown) > 6 and shown == [c.memory_id for c in pool[: len(shown)]]
    assert out.tokens_used == TOKENIZER.count(out.bundle) <= 800
    assert out.utilization >= 0.95
    reasons = {e.memory_id: e.reason for e in out.excluded}
    assert set(reasons.values()) == {"over_budget"}
    # An explicit top_k keeps its meaning.
    two = run(request(budget_tokens=800, top_k=2, include_index=False), pool)
    assert [i.memory_id for i in two.included] == shown[:2]


def test_the_relevance_cut_leaves_what_the_task_is_not_about_to_the_index() -> None:
    # Ten memories the task is about, then 150 only the priors rank (no retriever found them
    # relevant: each is some namespace neighbour with a far vector and no lexical hit).
    about = turns(10)
    beside = [
        memory(f"01JU{n:022d}", content="unrelated " * 5, vector_rank=50 + n, vector_distance=0.99)
        for n in range(150)
    ]
    cut = dataclasses.replace(DEFAULT_PROFILE, version="rank/test-cut", full_tier_cut=0.3)
    out = run(request(budget_tokens=2000, top_k=None), [*about, *beside], [], 500, profile=cut)
    shown = {i.memory_id for i in out.included}
    assert shown == {c.memory_id for c in about}
    details = {e.memory_id: e.detail for e in out.excluded if e.reason == "below_top_k"}
    assert set(details) == {c.memory_id for c in beside}
    assert all("relevance is below 0.3" in d for d in details.values())
    # Their room went to index lines pointing at them, and the budget is still used.
    assert set(out.index.entries) < {c.memory_id for c in beside}
    assert out.utilization >= 0.9
    # Without the cut, the same memories fill the full tier instead.
    uncut = run(request(budget_tokens=2000, top_k=None), [*about, *beside], [], 500)
    assert {i.memory_id for i in uncut.included} > shown


def test_an_index_that_does_not_fit_points_where_the_full_tier_stops() -> None:
    # A namespace of 500: its index cannot fit. The lines are the most relevant memories not
    # shown in full, in rank order, then the index's own entries in its order.
    pool = turns(40, words=60)
    entries = index_of([memory(f"01JI{n:022d}", confidence=0.9) for n in range(30)])
    out = run(request(budget_tokens=2000, top_k=None), pool, entries, 500)
    shown = [i.memory_id for i in out.included]
    lines = list(out.index.entries)
    assert shown and lines and not set(shown) & set(lines)
    ranked_rest = [c.memory_id for c in pool if c.memory_id not in shown]
    assert lines[: len(ranked_rest)] == ranked_rest[: len(lines)]
    if len(lines) > len(ranked_rest):
        assert lines[len(ranked_rest) :] == [e.memory_id for e in entries][: len(lines) - 40]
    # The "more" line counts what is neither listed nor in full, and says how to reach it.
    index_section = out.bundle.split(SEPARATOR)[1]
    found = POINTING_MORE.search(index_section)
    assert found is not None and int(found.group(1)) == 500 - len(lines) - len(shown)
    # The refs read in order: the memories in full first, then the lines.
    ref_of = {memory_id: ref for ref, memory_id in out.refs}
    assert [ref_of[m] for m in shown] == [f"m{n}" for n in range(1, len(shown) + 1)]
    assert [ref_of[m] for m in lines][:2] == [f"m{len(shown) + 1}", f"m{len(shown) + 2}"]
    assert out.tokens_used == TOKENIZER.count(out.bundle) <= 2000
    assert out.utilization >= 0.95
    details = {e.detail for e in out.excluded if e.reason == "index_truncated"}
    assert details == {
        f"the index lists the most relevant memories not in full in the {out.index.tokens} "
        "tokens they left"
    }


def test_an_index_that_fits_whole_stays_whole() -> None:
    pool = turns(5)
    entries = index_of(pool)
    req = request(budget_tokens=2000, top_k=3)
    out = run(req, pool, entries, 5)
    # Every memory listed, in the index's order, with the bytes the assembler before gave it.
    assert out.index.entries == tuple(e.memory_id for e in entries)
    assert out.bundle == run(req, pool, entries, 5, assembler=ADMITTED).bundle
    assert "more" not in out.bundle


def test_a_pointing_index_under_a_policy_that_can_deny_states_no_count() -> None:
    pool = turns(30, words=40)
    entries = index_of([memory(f"01JI{n:022d}") for n in range(20)])

    def under(hidden: int) -> Assembly:
        denied = [memory(f"01JH{n:022d}", namespace="hr", confidence=0.9) for n in range(hidden)]
        verdict = Verdict(denied={d.memory_id: _deny(d) for d in denied})
        return run(
            request(budget_tokens=1200, top_k=None),
            pool,
            index_of([*entries, *denied]),
            200 + hidden,
            verdict=verdict,
            withhold_count=True,
        )

    outs = [under(hidden) for hidden in (0, 7, 40)]
    assert len({o.bundle for o in outs}) == 1
    assert more_line(0, with_count=False, pointing=True) in outs[0].bundle
    assert not POINTING_MORE.search(outs[0].bundle.split(SEPARATOR)[1])


def _deny(c: Candidate) -> Exclusion:
    return Exclusion(c.memory_id, "policy_denied", "no-hr")


@pytest.mark.parametrize("budget", [60, 97, 180, 333, 800, 1511, 2000, 3999])
def test_the_bundle_is_never_over_its_budget(budget: int) -> None:
    pool = turns(80, words=30)
    entries = index_of([memory(f"01JI{n:022d}") for n in range(50)])
    for top_k in (None, 4):
        out = run(request(budget_tokens=budget, top_k=top_k), pool, entries, 400)
        assert out.tokens_used == TOKENIZER.count(out.bundle) <= budget


def test_an_assembler_before_budget_sized_tiers_refuses_a_request_without_top_k() -> None:
    with pytest.raises(SelectionError, match="needs a top_k"):
        run(request(top_k=None), turns(3), assembler=ADMITTED)


def test_floors_spare_counting_and_change_nothing_admitted() -> None:
    blocks = [" ".join(f"w{i}x{j}" for j in range(20 + 40 * (i % 5))) for i in range(60)]
    prefix = "# header"
    exact = [TOKENIZER.count(SEPARATOR + b) for b in blocks]
    counted = fill_tail(TOKENIZER, prefix, blocks, 700, "skip")
    floored = fill_tail(TOKENIZER, prefix, blocks, 700, "skip", [c * 3 // 4 for c in exact])
    assert floored.admitted == counted.admitted and floored.bundle == counted.bundle
    # The blocks whose floor alone could not fit were never counted.
    assert floored.floored and not counted.floored
    assert all(floored.costs[i] < exact[i] for i in floored.floored)
