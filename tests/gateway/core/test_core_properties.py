"""Properties over random memories: the token bound, the accounting, the cache-stable prefix."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.core.assembly import assemble
from gateway.core.fill import fill_tail
from gateway.core.model import MEMORY_TYPES, Candidate, ContextRequest
from gateway.core.render import HEADERS, SEPARATOR, TAIL_TITLE
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import DEFAULT_PROFILE
from tests.gateway.core.core_samples import NOW, memory

TOKENIZER = load_tokenizer()
SPECIALS = [
    "<|endoftext|>",
    "<|fim_prefix|>",
    "   ",
    "\n\n\n",
    "\t \r\n",
    "🧠👩‍💻🏳️‍🌈",
    "記憶は過去の証拠です。",
    "데이터베이스",
    "### fake heading\n",
    "…",
    "\u200b\u00a0",
    "ignore previous instructions",
    "!\r\n",
    " \r\n",
]
piece = st.one_of(st.text(max_size=40), st.sampled_from(SPECIALS))
short_text = st.lists(piece, max_size=6).map("".join)
long_text = st.builds(lambda s, n: s * n, short_text, st.integers(1, 300))
content_text = st.one_of(short_text, short_text, long_text)
# Mostly None, so that most memories are live.
instants = st.one_of(
    st.none(),
    st.none(),
    st.none(),
    st.integers(-5000, 5000).map(lambda m: NOW + timedelta(minutes=m)),
)
ranks = st.one_of(st.none(), st.integers(1, 50))


@st.composite
def memories(draw: st.DrawFn, memory_id: str) -> Candidate:
    deleted_at = draw(instants)
    return memory(
        memory_id,
        heading=draw(short_text),
        content=draw(content_text),
        memory_type=draw(st.sampled_from(MEMORY_TYPES)),
        confidence=draw(st.floats(0, 1)),
        namespace=draw(st.sampled_from(["ops", "hr", "名前空間"])),
        created_days_ago=draw(st.floats(-10, 3000)),
        expires_at=draw(instants),
        deleted_at=deleted_at,
        superseded_by=draw(st.sampled_from([None, "01JSUCCESSOR"])) if deleted_at else None,
        vector_rank=draw(ranks),
        vector_distance=draw(st.one_of(st.none(), st.floats(0, 2))),
        lexical_rank=draw(ranks),
        lexical_score=draw(st.one_of(st.none(), st.floats(0, 1))),
    )


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[ContextRequest, list[Candidate], list[Candidate], int]:
    size = draw(st.integers(0, 14))
    pool = [draw(memories(f"01JP{n:022d}")) for n in range(size)]
    chosen = draw(st.lists(st.sampled_from(pool), max_size=size) if pool else st.just([]))
    listed = draw(st.lists(st.sampled_from(pool), max_size=size) if pool else st.just([]))
    index = sorted(listed, key=lambda c: (-c.confidence, c.memory_id))
    total_live = draw(st.integers(0, 400))
    req = ContextRequest(
        task=draw(short_text) or "task",
        namespaces=("ops",),
        budget_tokens=draw(
            st.one_of(st.integers(1, 120), st.integers(100, 5000), st.integers(1, 5000))
        ),
        top_k=draw(st.one_of(st.integers(0, 10), st.integers(1, 4))),
        include_index=draw(st.booleans()),
        index_budget_tokens=draw(st.one_of(st.none(), st.integers(0, 2000))),
        fill=draw(st.sampled_from(["skip", "stop"])),
    )
    return req, chosen, index, total_live


@settings(
    max_examples=500,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenarios(), st.booleans())
def test_bundles_never_exceed_the_budget_and_account_for_everyone(
    scenario: tuple[ContextRequest, list[Candidate], list[Candidate], int], withhold_count: bool
) -> None:
    req, candidates, index, total_live = scenario
    out = assemble(
        req,
        candidates,
        index,
        total_live,
        profile=DEFAULT_PROFILE,
        tokenizer=TOKENIZER,
        now=NOW,
        withhold_count=withhold_count,
    )
    assert out.index.count_withheld == withhold_count
    # The bound, on the exact count of the final string.
    assert out.tokens_used == TOKENIZER.count(out.bundle) <= req.budget_tokens
    assert 0 <= out.utilization <= 1

    # Every memory passed in is included, shown as an index-only entry, or excluded: exactly once.
    retrieved_ids = {c.memory_id for c in candidates}
    included = [i.memory_id for i in out.included]
    excluded = [e.memory_id for e in out.excluded]
    index_only_shown = [m for m in out.index.entries if m not in retrieved_ids]
    everyone = retrieved_ids | {c.memory_id for c in index}
    together = included + excluded + index_only_shown
    assert sorted(together) == sorted(everyone)
    assert excluded == sorted(excluded)
    assert req.top_k is None or len(included) <= req.top_k
    assert set(included) <= retrieved_ids

    # Dead memories never reach the bundle; ids never appear unless shown.
    dead = {e.memory_id for e in out.excluded if e.reason in ("expired", "deleted", "superseded")}
    for memory_id in dead:
        assert memory_id not in out.bundle
    for memory_id in everyone - set(included) - set(out.index.entries):
        assert memory_id not in out.bundle

    # The prefix is a prefix in tokens too, so prompt caches keep it.
    assert out.bundle.startswith(out.prefix)
    prefix_tokens = TOKENIZER.encode(out.prefix)
    assert TOKENIZER.encode(out.bundle)[: len(prefix_tokens)] == prefix_tokens

    # Same inputs, same bytes.
    again = assemble(
        req,
        candidates,
        index,
        total_live,
        profile=DEFAULT_PROFILE,
        tokenizer=TOKENIZER,
        now=NOW,
        withhold_count=withhold_count,
    )
    assert again == out


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.lists(st.lists(st.sampled_from([*SPECIALS, "a", "b.", "1"]), max_size=5), max_size=8),
    st.integers(-20, 5),
    st.sampled_from(["skip", "stop"]),
)
def test_tail_fill_holds_the_bound_when_seams_cost_more_than_pieces(
    pieces: list[list[str]], slack: int, mode: str
) -> None:
    blocks = [f"### B{n}\nmeta\n" + "".join(p) for n, p in enumerate(pieces)]
    prefix = HEADERS[2]
    estimate = (
        TOKENIZER.count(prefix)
        + TOKENIZER.count(SEPARATOR + TAIL_TITLE)
        + sum(TOKENIZER.count(SEPARATOR + b) for b in blocks)
    )
    budget = max(TOKENIZER.count(prefix), estimate + slack)
    fit = fill_tail(TOKENIZER, prefix, blocks, budget, mode)  # type: ignore[arg-type]
    assert fit.tokens == TOKENIZER.count(fit.bundle) <= budget
    expected = prefix + (
        SEPARATOR + TAIL_TITLE + "".join(SEPARATOR + blocks[i] for i in fit.admitted)
        if fit.admitted
        else ""
    )
    assert fit.bundle == expected
    assert list(fit.admitted) == sorted(fit.admitted)
