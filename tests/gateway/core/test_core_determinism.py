"""Same inputs, same bytes: across processes, hash seeds and input order of the store's lists."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import msgspec

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

# Each assembler's assembly of `_defended_sample` (the update told with no change word, then
# with one), every value of it as msgspec JSON: what its receipt's members are written from, so
# a change to any is a change to the bytes that version's receipts promise.
PINNED: dict[str, tuple[str, str]] = {
    "assemble/2026-12-01.1": (
        "4ec722739bb24d01d5d013ddd8149779fb46c8ab78e3b5b1b8a0c8d6e56e1e8f",
        "508e62702dbdfbbd12bb56ff1a5667eb19c5b7ecb249c05358c6908a1faf3295",
    ),
    "assemble/2026-12-02.1": (
        "4ec722739bb24d01d5d013ddd8149779fb46c8ab78e3b5b1b8a0c8d6e56e1e8f",
        "508e62702dbdfbbd12bb56ff1a5667eb19c5b7ecb249c05358c6908a1faf3295",
    ),
    "assemble/2026-12-02.2": (
        "4ec722739bb24d01d5d013ddd8149779fb46c8ab78e3b5b1b8a0c8d6e56e1e8f",
        "508e62702dbdfbbd12bb56ff1a5667eb19c5b7ecb249c05358c6908a1faf3295",
    ),
    "assemble/2026-12-02.3": (
        "0875986e439f8fc3ead26d057e2c6fad1b3194217da2d34809187dd7c2331d46",
        "2f00e581f5207fe6ecf06c3ce236619eca371dbf552af3f20e9a05295ae47f68",
    ),
    "assemble/2026-12-04.1": (
        "0875986e439f8fc3ead26d057e2c6fad1b3194217da2d34809187dd7c2331d46",
        "2f00e581f5207fe6ecf06c3ce236619eca371dbf552af3f20e9a05295ae47f68",
    ),
    "assemble/2026-12-04.2": (
        "74c5417f219ab1a03b8738bdac7bb4f047e7d3b403e497bc29e759e254398942",
        "f0d43a9c0d93ba0170591e650e3c9278278c8f3638e5e594576158738b08f472",
    ),
    "assemble/2026-12-05.1": (
        "17a2c223ffff393a4a397011336883931b2ce1b8166f68bce1774616a6d902d3",
        "b52d893f6d5aecdad8e5695393c5d9c9bed613568d095ac81db3a779b33d3aa0",
    ),
    "assemble/2026-12-05.2": (
        "17a2c223ffff393a4a397011336883931b2ce1b8166f68bce1774616a6d902d3",
        "b52d893f6d5aecdad8e5695393c5d9c9bed613568d095ac81db3a779b33d3aa0",
    ),
    "assemble/2026-12-05.3": (
        "17a2c223ffff393a4a397011336883931b2ce1b8166f68bce1774616a6d902d3",
        "b52d893f6d5aecdad8e5695393c5d9c9bed613568d095ac81db3a779b33d3aa0",
    ),
    "assemble/2026-12-05.4": (
        "17a2c223ffff393a4a397011336883931b2ce1b8166f68bce1774616a6d902d3",
        "b52d893f6d5aecdad8e5695393c5d9c9bed613568d095ac81db3a779b33d3aa0",
    ),
    "assemble/2026-12-06.1": (
        "0d087713ec3d3f32e32df25bb219061c35e9210bcbf837dccfcb0f7f5f8fea24",
        "edc698d9b1c270e34d939d4916e58e77f45a79d43eb4b4ef7d73dbcb5ef888a6",
    ),
    "assemble/2026-12-06.3": (
        "e1a7aceabf9eeb0ee719c390eb8e3295acbc6f9feae3bbdcf79fbb39961f36bc",
        "edc698d9b1c270e34d939d4916e58e77f45a79d43eb4b4ef7d73dbcb5ef888a6",
    ),
    "assemble/2026-12-06.4": (
        "c89da57cc36ed74e0902c187031373dcac1914e6ce3a0ff5c15a3245acb6c00d",
        "6fa61562a8648ee2c2c8a49e4614b402e764e0bc159c2aedb63c0f6a038f6be0",
    ),
    "assemble/2026-12-06.5": (
        "e35ce874c242cc5ded9abb907ff32827c06c8f25f3b7f44db9bf5e81fd39084e",
        "29c54abf513abb59e77ffc8aa53d762d0588b04000c758e0b155f938c437e62d",
    ),
}

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PROGRAM = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from tests.gateway.core.core_samples import sample_assembly
import msgspec
assembly = sample_assembly(700)
sys.stdout.buffer.write(assembly.bundle.encode("utf-8"))
sys.stdout.buffer.write(b"\\0")
sys.stdout.buffer.write(msgspec.json.encode(assembly))
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
    assert record == msgspec.json.encode(local)
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
    """The sha256 of the assembly (the bundle, what it included and left out and why, the
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
    return hashlib.sha256(msgspec.json.encode(assembly)).hexdigest()


def test_every_assembler_kept_for_replay_builds_its_pinned_bundle() -> None:
    # Exact replay promises each version's bytes for as long as it is built: a bundle the
    # question-reading rules, the weighings and the digest rule act on, pinned per version.
    built = {
        version: (_defended_sample(a, WENT), _defended_sample(a, SWITCHED))
        for version, a in ASSEMBLERS.by_version.items()
    }
    assert built == PINNED
    # The sample is one the rules act on: eight of the fourteen versions build assemblies of their
    # own (those before 2026-12-04.2 differ where conflicts and policies act, pinned above).
    assert len(set(built.values())) == 8
