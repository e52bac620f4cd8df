"""The gate's on-demand texts (`GateVerdict.rewrite`): the core asks once, for exactly the
memories it is about to render (index lines by heading, tier-2 blocks in full), renders what the
gate returns, refuses texts for memories it did not ask about, and builds the same bytes as a gate
that hands over the same texts eagerly (`GateVerdict.rewritten`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta

import pytest

from gateway.core.assembly import ASSEMBLER_VERSION, ASSEMBLER_VERSIONS, assemble
from gateway.core.gate import GateVerdict, GateVerdictError
from gateway.core.model import Candidate, ContextRequest, Exclusion, MemoryId
from gateway.core.outcome import Assembly
from gateway.core.ranking import DEFAULT_PROFILE
from gateway.core.render import index_line, memory_block
from gateway.core.tokens import load_tokenizer
from tests.gateway.core.core_samples import NOW, index_of, memory, request

TOKENIZER = load_tokenizer()
Texts = Mapping[MemoryId, tuple[str, str]]


class Disclosing:
    """A gate whose verdict hands out texts on demand; it records what it was shown and asked."""

    def __init__(
        self,
        texts: Texts,
        *,
        denied: Sequence[str] = (),
        capped: Sequence[str] = (),
    ) -> None:
        self.texts = texts
        self.denied = {
            MemoryId(m): Exclusion(MemoryId(m), "policy_denied", "rule no-hr") for m in denied
        }
        self.capped = {
            MemoryId(m): Exclusion(MemoryId(m), "policy_capped", "rule cap-episodic")
            for m in capped
        }
        self.shown: list[list[str]] = []
        self.asked: list[tuple[list[str], list[str]]] = []

    def __call__(self, shown: Sequence[Candidate]) -> GateVerdict:
        self.shown.append([c.memory_id for c in shown])
        return GateVerdict(denied=self.denied, capped=self.capped, rewrite=self.rewrite)

    def rewrite(self, headings: Sequence[MemoryId], full: Sequence[MemoryId]) -> Texts:
        self.asked.append((list(headings), list(full)))
        return self.texts


class Eager:
    """The same verdict, with the texts handed over up front."""

    def __init__(self, lazy: Disclosing) -> None:
        self.lazy = lazy

    def __call__(self, shown: Sequence[Candidate]) -> GateVerdict:
        return GateVerdict(
            denied=self.lazy.denied, capped=self.lazy.capped, rewritten=self.lazy.texts
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


def run(
    gate: Disclosing | Eager,
    req: ContextRequest,
    *,
    version: str = ASSEMBLER_VERSION,
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
        gate=gate,
        withhold_count=withhold_count,
        version=version,
    )


def test_rewrite_is_asked_once_for_the_index_members_and_the_top() -> None:
    # r1 is capped (out of tier 2, keeps its line), i-b denied (neither), i-dead is dead.
    gate = Disclosing({}, denied=["i-b"], capped=["r1"])
    out = run(gate, request(budget_tokens=4000, top_k=2))
    assert len(gate.shown) == 1 and len(gate.asked) == 1
    headings, full = gate.asked[0]
    _, index = scene()
    # Every live, undenied index entry, in index order: capped and beyond-top_k ones too.
    assert headings == [c.memory_id for c in index if c.memory_id not in ("i-b", "i-dead")]
    assert set(headings) == {"r0", "r1", "r2", "r3", "r4", "r5", "i-a"}
    # Tier 2: the admitted top_k in rank order, never the capped one.
    assert full == [i.memory_id for i in out.included] == ["r0", "r2"]
    reasons = {e.memory_id: e.reason for e in out.excluded}
    assert reasons == {
        "r1": "policy_capped",
        "r3": "below_top_k",
        "r4": "below_top_k",
        "r5": "below_top_k",
        "i-b": "policy_denied",
        "i-dead": "deleted",
    }
    # Nothing recalled but not shown was asked about in full.
    assert not {"r1", "r3", "r4", "r5", "i-a", "i-b"} & set(full)


def test_without_the_index_only_the_top_is_asked_about() -> None:
    gate = Disclosing({})
    out = run(gate, request(budget_tokens=4000, top_k=3, include_index=False))
    assert gate.asked == [([], [i.memory_id for i in out.included])]
    assert [i.memory_id for i in out.included] == ["r0", "r1", "r2"]


def test_the_texts_rewrite_returns_are_what_is_rendered() -> None:
    texts = {
        MemoryId("r0"): ("Ask [email]", "Mail [email] about step 0."),
        MemoryId("r3"): ("Ask [email] (r3)", ""),  # beyond top_k: its index line only
        MemoryId("i-a"): ("Index [email]", ""),
    }
    gate = Disclosing(texts)
    out = run(gate, request(budget_tokens=4000, top_k=2))
    retrieved, index = scene()
    by_id: dict[str, Candidate] = {c.memory_id: c for c in [*retrieved, *index]}
    bundle = out.bundle
    # Rewritten headings in the index lines, rewritten heading and content in the block.
    assert index_line(by_id["r0"], "Ask [email]") + "\n" in bundle
    assert index_line(by_id["r3"], "Ask [email] (r3)") + "\n" in bundle
    assert index_line(by_id["i-a"], "Index [email]") + "\n" in bundle
    assert memory_block(by_id["r0"], "Ask [email]", "Mail [email] about step 0.") in bundle
    for gone in ("r0@", "r3@", "a@example.com"):
        assert gone not in bundle
    # What the gate did not rewrite is rendered as stored.
    assert memory_block(by_id["r1"], by_id["r1"].heading, by_id["r1"].content) in bundle
    assert index_line(by_id["i-b"], "Index b@example.com") in bundle
    assert set(out.index.entries) == {c.memory_id for c in index if c.memory_id != "i-dead"}
    flags = {i.memory_id: i.rewritten for i in out.included}
    assert flags == {"r0": True, "r1": False}
    (r0,) = (i for i in out.included if i.memory_id == "r0")
    assert r0.content_sha256 == by_id["r0"].content_sha256  # the stored version's hash
    assert r0.tokens == TOKENIZER.count(
        memory_block(by_id["r0"], "Ask [email]", "Mail [email] about step 0.")
    )


@pytest.mark.parametrize(
    ("stray", "req"),
    [
        ("stranger", request(budget_tokens=4000, top_k=2)),  # never shown to the gate
        ("i-b", request(budget_tokens=4000, top_k=2)),  # shown, but denied: not rendered
        ("i-dead", request(budget_tokens=4000, top_k=2)),  # dead: never shown to the gate
        ("r4", request(budget_tokens=4000, top_k=2, include_index=False)),  # below top_k
    ],
    ids=["stranger", "denied", "dead", "below-top-k-without-index"],
)
def test_texts_for_a_memory_not_asked_about_fail_closed(stray: str, req: ContextRequest) -> None:
    # i-b reaches the gate only with the index on.
    gate = Disclosing({MemoryId(stray): ("h", "c")}, denied=["i-b"] if req.include_index else [])
    with pytest.raises(GateVerdictError) as raised:
        run(gate, req)
    assert raised.value.memory_id == stray
    assert len(gate.asked) == 1
    assert stray not in {*gate.asked[0][0], *gate.asked[0][1]}


def test_a_stray_text_fails_closed_even_beside_good_ones() -> None:
    gate = Disclosing({MemoryId("r0"): ("Ask [email]", "x"), MemoryId("zz"): ("h", "c")})
    with pytest.raises(GateVerdictError, match="zz"):
        run(gate, request(budget_tokens=4000, top_k=2))


EAGER_TEXTS: Texts = {
    MemoryId("r0"): ("Ask [email]", "Mail [email] about step 0."),
    MemoryId("r1"): ("Ask [email] (one)", "Mail [email], a longer rewrite of step 1 " * 3),
    MemoryId("r4"): ("Ask [email] (r4)", ""),
    MemoryId("i-a"): ("Index [email]", ""),
}


@pytest.mark.parametrize("version", sorted(ASSEMBLER_VERSIONS))
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
def test_on_demand_texts_build_the_bytes_of_an_eager_gate(
    version: str, withhold_count: bool, req: ContextRequest
) -> None:
    if req.include_index:
        lazy = Disclosing(EAGER_TEXTS, denied=["i-b"], capped=["r2"])
    else:  # the index-only entries never reach the gate, and no index line is rendered
        texts = {m: t for m, t in EAGER_TEXTS.items() if m in ("r0", "r1")}
        lazy = Disclosing(texts, capped=["r2"])
    on_demand = run(lazy, req, version=version, withhold_count=withhold_count)
    eager = run(Eager(lazy), req, version=version, withhold_count=withhold_count)
    assert on_demand.bundle.encode("utf-8") == eager.bundle.encode("utf-8")
    assert on_demand.bundle_sha256 == eager.bundle_sha256
    assert on_demand.to_record() == eager.to_record()
    assert on_demand.included == eager.included
    assert len(lazy.asked) == 1


def test_the_tight_budget_really_leaves_memories_out() -> None:
    # Guards the "tight" case above: it exercises over_budget and a truncated index.
    out = run(Disclosing(EAGER_TEXTS), request(budget_tokens=160, top_k=3))
    reasons = {e.reason for e in out.excluded}
    assert "over_budget" in reasons or "index_truncated" in reasons
