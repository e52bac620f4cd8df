"""Same inputs, same bytes: across processes, hash seeds and input order of the store's lists."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import rfc8785

from gateway.core.assembly import assemble
from gateway.core.model import Candidate
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import (
    ADMITTED,
    ASSEMBLER,
    ASSEMBLERS,
    BUDGET_SIZED,
    DEFAULT_PROFILE,
    Assembler,
)
from tests.gateway.core.core_samples import NOW, index_of, request, retrieved, sample_assembly
from tests.gateway.core.test_core_current_values import fact
from tests.gateway.core.test_core_replacing_turns import BEFORE, QUESTION, WENT
from tests.gateway.core.test_core_retold import digest, said

# Each assembler's records of `_defended_sample` (the update told with no change word, then with
# one): a change to any is a change to the bytes that version's receipts promise.
PINNED: dict[str, tuple[str, str]] = {
    "assemble/2026-12-01.1": (
        "0105e2849811466e24c5ec07bf18dfa3b83e0915047cb142ad8a36d066c4873a",
        "53c80726256d0ebe434c9d8bc41639736fab38a431f9d195b3eb526d7aeb22f2",
    ),
    "assemble/2026-12-02.1": (
        "0105e2849811466e24c5ec07bf18dfa3b83e0915047cb142ad8a36d066c4873a",
        "53c80726256d0ebe434c9d8bc41639736fab38a431f9d195b3eb526d7aeb22f2",
    ),
    "assemble/2026-12-02.2": (
        "0105e2849811466e24c5ec07bf18dfa3b83e0915047cb142ad8a36d066c4873a",
        "53c80726256d0ebe434c9d8bc41639736fab38a431f9d195b3eb526d7aeb22f2",
    ),
    "assemble/2026-12-02.3": (
        "b9aca132126cf6f9e07fdf1c6945f0478119cf0230297048c29b0fbf47e5e862",
        "995c7a71770fae7b3654afbe419c41c6bf6fadf5ebff177bf9e5a4b9eee500da",
    ),
    "assemble/2026-12-04.1": (
        "b9aca132126cf6f9e07fdf1c6945f0478119cf0230297048c29b0fbf47e5e862",
        "995c7a71770fae7b3654afbe419c41c6bf6fadf5ebff177bf9e5a4b9eee500da",
    ),
    "assemble/2026-12-04.2": (
        "814c7ae10fa4fb2eeccf8387743ca5b6568f317d1f7d7bbcc57d0037f2b95d3f",
        "8816f8cb2021bcb0758b12962bfbd9eee775349849487d5927116a8dc05756aa",
    ),
    "assemble/2026-12-05.1": (
        "cba2dcc02b6ef844da0d2bce9839eef1a7d1df21afebaf20a63ac305c12ac439",
        "00f3544915c7116c79cbec4ff7bda3877047216722f2301ba4bbc4e2d54577ea",
    ),
    "assemble/2026-12-05.2": (
        "cba2dcc02b6ef844da0d2bce9839eef1a7d1df21afebaf20a63ac305c12ac439",
        "00f3544915c7116c79cbec4ff7bda3877047216722f2301ba4bbc4e2d54577ea",
    ),
    "assemble/2026-12-05.3": (
        "cba2dcc02b6ef844da0d2bce9839eef1a7d1df21afebaf20a63ac305c12ac439",
        "00f3544915c7116c79cbec4ff7bda3877047216722f2301ba4bbc4e2d54577ea",
    ),
    "assemble/2026-12-05.4": (
        "cba2dcc02b6ef844da0d2bce9839eef1a7d1df21afebaf20a63ac305c12ac439",
        "00f3544915c7116c79cbec4ff7bda3877047216722f2301ba4bbc4e2d54577ea",
    ),
    "assemble/2026-12-06.1": (
        "533a2fe083108a77e194c6264037f8b6cd64ec12d6508680d0449fa8044b1163",
        "481ccbe4f01ae56f1f9459b74aae8cd61935d1d6a7cd629b70baa028278ddaf5",
    ),
    "assemble/2026-12-06.3": (
        "abdb65b08be565ef270814d50b8b8bdf7b4622f6a26ceca4ea878448871e22cf",
        "481ccbe4f01ae56f1f9459b74aae8cd61935d1d6a7cd629b70baa028278ddaf5",
    ),
    "assemble/2026-12-06.4": (
        "7ba9a25769b49ce3a52956b267afb1f957d2d8efacd07427f6650bcfa78a4429",
        "dfeb02d32e9398ba0a79de1c368249587fd225aa427406e702b97664d20867fb",
    ),
    "assemble/2026-12-06.5": (
        "4fe233ff27bfe08e7c3ad0f615ed6805e501a709fc41d5ae009e86976189b5f5",
        "0fe93c041dd739eb51f02a42772af2def56e60925b3c6a3596bc4c6c7c03c9d7",
    ),
}

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PROGRAM = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from tests.gateway.core.core_samples import sample_assembly
import rfc8785
assembly = sample_assembly(700)
sys.stdout.buffer.write(assembly.bundle.encode("utf-8"))
sys.stdout.buffer.write(b"\\0")
sys.stdout.buffer.write(rfc8785.dumps(assembly.to_record()))
"""


def run_in_subprocess(hash_seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM], cwd=ROOT, env=env, capture_output=True, check=True
    )
    return result.stdout


def test_bundles_and_records_are_byte_identical_across_processes() -> None:
    first = run_in_subprocess("1")
    second = run_in_subprocess("2")
    assert first == second
    bundle, _, record = first.partition(b"\0")
    local = sample_assembly(700)
    assert bundle == local.bundle.encode("utf-8")
    assert hashlib.sha256(bundle).hexdigest() == local.bundle_sha256
    assert b'"bundle_sha256":"' + local.bundle_sha256.encode() + b'"' in record


def test_the_order_of_the_retrieved_candidates_does_not_matter() -> None:
    candidates = retrieved(9)
    index = index_of(candidates)
    outputs = {
        assemble(
            request(budget_tokens=900, top_k=5),
            ordering,
            index,
            20,
            profile=DEFAULT_PROFILE,
            tokenizer=load_tokenizer(),
            now=NOW,
        ).bundle_sha256
        for ordering in (candidates, candidates[::-1], candidates[4:] + candidates[:4])
    }
    assert len(outputs) == 1


def test_the_sample_bundles_are_pinned() -> None:
    # The rendered format is part of the replay contract: a change here must come with a new
    # assembler version, because exact replay of old receipts compares bundle hashes.
    # 2026-12-01.1 renders compactly: per-bundle references, one short provenance line;
    # 2026-12-02.1 adds the conflicts section and 2026-12-02.2 a conflict's partner in the
    # top_k, so bundles without a conflict are unchanged; 2026-12-02.3 shows a heading's label
    # alone when its words open the content, which no sample heading does; 2026-12-04.1 ranks
    # only what the policy admits, and the samples are judged by no policy.
    assert sample_assembly(700, assembler=ADMITTED).bundle_sha256 == (
        "7a012b6f0873fc016528d25113844f380944f87b1f41895d12c1ec7e54800e27"
    )
    # Under a policy that can deny, the index's "more" line states no count.
    assert sample_assembly(700, withhold_count=True, assembler=ADMITTED).bundle_sha256 == (
        "643e7e4a708eb8b4fc17c31aa96819fee605fb2eda505e704393d08fe0e53a60"
    )
    # 2026-12-04.2: the sample's index (11 of 40 live) does not fit whole, so it points where
    # the full tier stops: the memories not in full, the most relevant first.
    assert BUDGET_SIZED.version == "assemble/2026-12-04.2"
    assert sample_assembly(700, assembler=BUDGET_SIZED).bundle_sha256 == (
        "85f8e8ee02dee15fe0738aad11262e2d58cfcfc2fcab365827fe98de92d8ab97"
    )
    assert sample_assembly(700, withhold_count=True, assembler=BUDGET_SIZED).bundle_sha256 == (
        "4ea2556b4475e4bfcf323f4f108a6b05695675124f7ecf09210b3804a41b59d8"
    )
    # 2026-12-05.1 leaves out the older of two memories stating different values of one claim,
    # 2026-12-05.2 reads the task as a question, 2026-12-05.3 a question asking which or who and
    # 2026-12-05.4 one answered by a sentence read whole, 2026-12-06.1 an update read as chat
    # says it, 2026-12-06.3 and .4 weigh the user's turns nearest a question of their own; no
    # sample memory is a remembered turn or a compiled fact, so none decides anything: the same
    # bytes.
    assert ASSEMBLER.version == "assemble/2026-12-06.5"
    assert sample_assembly(700).bundle_sha256 == (
        "85f8e8ee02dee15fe0738aad11262e2d58cfcfc2fcab365827fe98de92d8ab97"
    )
    assert sample_assembly(700, withhold_count=True).bundle_sha256 == (
        "4ea2556b4475e4bfcf323f4f108a6b05695675124f7ecf09210b3804a41b59d8"
    )


def _imported(candidate: Candidate, days_ago: float) -> Candidate:
    """A memory of a history imported yesterday, said `days_ago`."""
    said = NOW - timedelta(days=days_ago)
    return dataclasses.replace(candidate, valid_from=said, created_at=NOW - timedelta(days=1))


SWITCHED = "I switched dentists last month, my dentist is Dr. Ferro now."
REPLY = "Happy to help! Dear Dr. Ambrose's office, could we move my cleaning to a Thursday?"


def _defended_sample(assembler: Assembler, update: str) -> str:
    """The sha256 of the record (the bundle, what it included and left out and why, the
    decisions) of a bundle the later rules act on, under `assembler`: an imported history
    (said days apart, written yesterday) with a question of the user's own about a dentist they
    changed (`update`), the assistant's reply to the earlier statement, a rent the user said
    twice as they went, the first session's digest retelling the reply shown beside it, a
    compiled fact, and chat about other things; `top_k` 6 for the versions that need one."""
    day = (NOW - timedelta(days=60)).date().isoformat()
    dentist = (
        _imported(said("01JT01", 1, "user", BEFORE, days_ago=60), 60),
        _imported(said("01JT02", 2, "assistant", REPLY, days_ago=60), 60),
        _imported(said("01JT03", 1, "user", update, days_ago=5), 5),
    )
    rent = (
        said("01JT04", 1, "user", "My monthly rent is $1,850.", days_ago=90),
        said("01JT05", 3, "user", "My landlord raised it, my rent is now $1,975.", days_ago=30),
    )
    chat = _imported(said("01JT06", 1, "user", "Any tips for a quick pasta?", days_ago=20), 20)
    compiled = (
        digest("01JG01", f"- t2 assistant: {REPLY.partition('! ')[2]}", day=day),
        fact("01JF01", "my dentist is Dr. Ambrose", 60, claim_key="user.dentist"),
    )
    memories = [*compiled, *dentist, *rent, chat]
    ranked = [dataclasses.replace(m, vector_rank=n) for n, m in enumerate(memories, start=1)]
    # The digest the nearest by both retrievers: ranked above the turn it retells.
    ranked[0] = dataclasses.replace(ranked[0], lexical_rank=1, lexical_score=0.9)
    assembly = assemble(
        request(task=QUESTION, budget_tokens=700, top_k=None if assembler.budget_sized else 6),
        ranked[::-1],
        index_of(ranked),
        total_live=len(ranked),
        profile=DEFAULT_PROFILE,
        tokenizer=load_tokenizer(),
        now=NOW,
        assembler=assembler,
    )
    return hashlib.sha256(rfc8785.dumps(assembly.to_record())).hexdigest()


def test_every_assembler_kept_for_replay_builds_its_pinned_bundle() -> None:
    # Exact replay promises each version's bytes for as long as it is built: a bundle the
    # question-reading rules, the weighings and the digest rule act on, pinned per version.
    built = {
        version: (_defended_sample(a, WENT), _defended_sample(a, SWITCHED))
        for version, a in ASSEMBLERS.by_version.items()
    }
    assert built == PINNED
    # The sample is one the rules act on: eight of the fourteen versions build records of their
    # own (those before 2026-12-04.2 differ where conflicts and policies act, pinned above).
    assert len(set(built.values())) == 8
