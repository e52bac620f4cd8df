"""The "Conflicting memories" section (ARCHITECTURE §12): two delivered facts in an open conflict
are shown together, each with its writer and time, so neither is presented as current alone; the
assembler version before it renders the same inputs as it always did."""

from __future__ import annotations

from datetime import UTC, datetime

from gateway.core.assembly import assemble
from gateway.core.model import Candidate, ConflictSide, Exclusion, MemoryId, OpenConflict
from gateway.core.outcome import Assembly
from gateway.core.render import CONFLICTS_TITLE
from gateway.core.tokens import load_tokenizer
from gateway.core.verdict import Verdict
from gateway.core.versions import ASSEMBLER, COMPACT, CONFLICTS, DEFAULT_PROFILE, Assembler
from tests.gateway.core.core_samples import NOW, memory, request

TOKENIZER = load_tokenizer()
AT = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
TEAM = OpenConflict(
    "user.team",
    (
        ConflictSide(MemoryId("c-fraud"), "planner", "01jdz6q0000000000000000001", AT),
        ConflictSide(MemoryId("c-payments"), "coder", "01jdz6q0000000000000000002", AT),
    ),
)


def facts() -> list[Candidate]:
    return [
        memory("c-fraud", content="The user is on the Fraud team.", vector_rank=1),
        memory("m-other", content="Deploys go out on Thursdays.", vector_rank=2),
        memory("c-payments", content="The user is on the Payments team.", vector_rank=3),
    ]


def run(
    budget: int = 800,
    conflicts: tuple[OpenConflict, ...] = (TEAM,),
    assembler: Assembler = ASSEMBLER,
    top_k: int = 6,
) -> Assembly:
    return assemble(
        request(budget_tokens=budget, include_index=False, top_k=top_k),
        facts(),
        (),
        3,
        profile=DEFAULT_PROFILE,
        tokenizer=TOKENIZER,
        now=NOW,
        conflicts=conflicts,
        assembler=assembler,
    )


def test_both_sides_are_shown_together_with_writer_and_time() -> None:
    out = run()
    section = out.bundle[out.bundle.index(CONFLICTS_TITLE) :]
    assert section.startswith(f"{CONFLICTS_TITLE}: user.team, unresolved")
    first = "written by planner (key 01jdz6q0000000000000000001) at 2024-05-01T09:00:00Z"
    second = "written by coder (key 01jdz6q0000000000000000002) at 2024-05-01T09:00:00Z"
    assert section.index(first) < section.index("Fraud team") < section.index(second)
    assert section.index(second) < section.index("Payments team")
    # The pair stands at its better side's position: before the memory ranked between them.
    assert out.bundle.index("Payments team") < out.bundle.index("Thursdays")
    assert {i.memory_id for i in out.included} == {"c-fraud", "c-payments", "m-other"}


def test_a_pair_fits_whole_or_not_at_all() -> None:
    pair = {"c-fraud", "c-payments"}
    for budget in range(40, 400, 5):
        out = run(budget=budget)
        shown = {i.memory_id for i in out.included}
        assert pair <= shown or not pair & shown, budget
        assert out.tokens_used <= budget
        if not pair & shown and out.tokens_used:
            reasons = {str(e.memory_id): e.reason for e in out.excluded}
            assert reasons["c-fraud"] == reasons["c-payments"] == "over_budget"


def test_a_side_in_the_top_k_brings_its_partner_from_below_them() -> None:
    out = run(top_k=1)
    section = out.bundle[out.bundle.index(CONFLICTS_TITLE) :]
    assert "Fraud team" in section and "Payments team" in section
    assert {i.memory_id for i in out.included} == {"c-fraud", "c-payments"}
    [below] = [e for e in out.excluded if e.reason == "below_top_k"]
    # The memory between them keeps its own rank in the exclusion's detail.
    assert below.memory_id == "m-other" and below.detail.startswith("ranked 2 ")


def test_the_previous_version_shows_a_lone_side_as_any_memory() -> None:
    out = run(top_k=2, assembler=CONFLICTS)
    assert CONFLICTS_TITLE not in out.bundle
    assert "Fraud team" in out.bundle and "Payments team" not in out.bundle


def test_a_partner_the_policy_did_not_admit_stays_out() -> None:
    denied = Verdict(
        denied={MemoryId("c-payments"): Exclusion(MemoryId("c-payments"), "policy_denied", "r")}
    )
    out = assemble(
        request(budget_tokens=800, include_index=False, top_k=1),
        facts(),
        (),
        3,
        profile=DEFAULT_PROFILE,
        tokenizer=TOKENIZER,
        now=NOW,
        conflicts=(TEAM,),
        verdict=denied,
    )
    assert CONFLICTS_TITLE not in out.bundle and "Payments team" not in out.bundle
    assert {i.memory_id for i in out.included} == {"c-fraud"}


def test_the_previous_assembler_renders_as_before_and_a_bundle_without_conflicts_is_unchanged() -> (
    None
):
    assert run(assembler=COMPACT).bundle == run(conflicts=()).bundle
    assert run(top_k=2, assembler=COMPACT).bundle == run(top_k=2, conflicts=()).bundle
    assert run(conflicts=()).bundle == run(conflicts=(), assembler=COMPACT).bundle
    assert ASSEMBLER.conflicts_section and not COMPACT.conflicts_section
    assert run().bundle_sha256 == run().bundle_sha256  # the same inputs, the same bytes
