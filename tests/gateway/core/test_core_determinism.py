"""Same inputs, same bytes: across processes, hash seeds and input order of the store's lists."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from gateway.core.assembly import assemble
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import ADMITTED, ASSEMBLER, BUDGET_SIZED, DEFAULT_PROFILE
from tests.gateway.core.core_samples import NOW, index_of, request, retrieved, sample_assembly

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
