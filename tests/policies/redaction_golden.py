"""ASCII redaction as the ASCII-only detectors did it, recorded, to hold the Unicode-aware ones to.

`vectors/redaction/ascii.json` was recorded by `record()` from the detectors of commit 8517b30
(before text folding and matches across heading and content), run on the corpus below: every
positive and negative of test_policy_detectors.py in its sentence, the equivalence tests' texts,
seeded random mixtures of them, heading/content pairs (each text redacted on its own, as that
engine did), and a digest of the whole evaluation of the benchmark's data sets under the bench,
default and strict bundles. The corpus is pure ASCII; test_policy_unicode.py checks that the
detectors still give exactly these results (a pair whose texts hold a secret across them aside).

    .venv/bin/python -m tests.policies.redaction_golden   # re-records: only with intent
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.policies.detector_vectors import CONTEXTS, NEGATIVES, POSITIVES

GOLDEN = Path(__file__).parent / "vectors" / "redaction" / "ascii.json"
DETECTOR_SETS = [
    ["email", "phone", "card", "iban", "api_token"],
    ["email"],
    ["card", "phone"],
    ["iban"],
    ["api_token"],
]
_EQUIVALENCE_TEXTS = [
    "plain text",
    "Heading 12 about the service",
    "mail ann@example.com",
    "call +1 415 555 0134",
    "card 4111 1111 1111 1111 and DE89 3704 0044 0532 0130 00",
    "key AKIAIOSFODNN7EXAMPLE",
    "Bearer abcdefghijklmnopqrstuvwxyz0123",
    "ann@example.com, 4111-1111-1111-1111, sk-proj-abcdefghijklmnopqrstuvwx",
    "2026-01-01 12:00:00, 192.168.100.100, 1234567",
    "tel 012 345 678",
    "discard\nmail\tx",
    "card 4222222222222",
    "ids 12345678 and 123456789012",
]
# Texts whose ends meet in pairs: numbers, dates, words, parts of secrets.
PAIR_POOL = [
    "",
    "Atlas owners",
    "The payments team owns Atlas.",
    "Release 2.5",
    "0.5",
    "Sprint 5",
    "Room 1204",
    "2026-01-01 12:00:00 standup",
    "555 0134 is the desk",
    "ids 12345678",
    "12 items",
    "call +1 415",
    "415 555 0134 after six",
    "mail ann@example.com",
    "ann@example.com wrote",
    "card 4111 1111 1111 1111",
    "DE89 3704 0044 0532 0130 00 is the account",
    "key AKIAIOSFODNN7EXAMPLE",
    "x-ray",
    "Bearer",
    "version 1.2.3",
    "v1.2",
    "3.4 release",
    # Parts of secrets: these pairs do hold one across the joint.
    "Card 4111 1111",
    "1111 1111 on file",
    "mail ann@exa",
    "mple.com today",
    "abcdefghijklmnopqrstuvwxyz0123456789 end",
]


def texts() -> list[str]:
    """The single texts: positives and negatives in their sentences, the equivalence texts,
    and 200 seeded mixtures of all of them and a few words, glued by assorted separators."""
    found: list[str] = []
    for name, examples in POSITIVES.items():
        found += [CONTEXTS[name].format(example) for example in examples]
        found += examples
    for examples in NEGATIVES.values():
        found += examples
    found += _EQUIVALENCE_TEXTS
    pieces = [*found, "the", "owner", "2026", "12", "Release 2.5", "ok", "x", "42"]
    rnd = random.Random(20261129)
    separators = [" ", " ", "\n", ", ", "", "-", ".", ": ", " and "]
    for _ in range(200):
        chosen = [rnd.choice(pieces) for _ in range(rnd.randint(1, 6))]
        text = chosen[0]
        for piece in chosen[1:]:
            text += rnd.choice(separators) + piece
        found.append(text)
    assert all(text.isascii() for text in found)
    return found


def pairs() -> list[tuple[str, str]]:
    return [(heading, content) for heading in PAIR_POOL for content in PAIR_POOL]


Redact = Callable[[str, list[str]], tuple[str, list[tuple[str, int]]]]


def bench_digests() -> dict[str, str]:
    """sha256 of each whole evaluation (to_json, keys sorted) of the benchmark's data sets."""
    from policies import evaluate
    from policies.shipped import shipped_bundle
    from tests.policies.policy_bench import NOW, REQUEST, bench_bundle, memories

    bundles = {
        "bench": bench_bundle(),
        "default": shipped_bundle("default").bundle,
        "strict": shipped_bundle("strict").bundle,
    }
    found = {}
    for label, bundle in bundles.items():
        for heavy in (False, True):
            evaluation = evaluate(bundle, REQUEST, memories(500, heavy=heavy), NOW)
            canonical = json.dumps(evaluation.to_json(), sort_keys=True).encode()
            found[f"{label}/{'heavy' if heavy else 'typical'}"] = hashlib.sha256(
                canonical
            ).hexdigest()
    return found


def outcome(redact: Redact, text: str, detectors: list[str]) -> list[Any] | None:
    """[redacted text, counts], or None when nothing was redacted (the text as it was)."""
    redacted, counts = redact(text, detectors)
    if not counts:
        assert redacted == text
        return None
    return [redacted, [list(count) for count in counts]]


def record(redact: Redact) -> dict[str, Any]:
    """The golden document, `redact(text, detectors)` giving (text, counts): per text, its
    outcome under each of DETECTOR_SETS; per pair, the heading's and the content's under
    all detectors; the bench digests."""
    everything = DETECTOR_SETS[0]
    return {
        "texts": [
            [text, *(outcome(redact, text, detectors) for detectors in DETECTOR_SETS)]
            for text in texts()
        ],
        "pairs": [
            [
                heading,
                content,
                outcome(redact, heading, everything),
                outcome(redact, content, everything),
            ]
            for heading, content in pairs()
        ],
        "bench": bench_digests(),
    }


def _redact_text(text: str, detectors: list[str]) -> tuple[str, list[tuple[str, int]]]:
    from policies.detectors import redact_text

    result = redact_text(text, detectors)
    return result.text, [(name, count) for name, count in result.counts]


if __name__ == "__main__":
    document = record(_redact_text)
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(entry, separators=(",", ":")) for entry in document["texts"]]
    lines += [json.dumps(entry, separators=(",", ":")) for entry in document["pairs"]]
    body = (
        '{"texts": [\n'
        + ",\n".join(lines[: len(document["texts"])])
        + '\n],\n"pairs": [\n'
        + ",\n".join(lines[len(document["texts"]) :])
        + '\n],\n"bench": '
        + json.dumps(document["bench"], indent=1, sort_keys=True)
        + "}\n"
    )
    assert json.loads(body) == json.loads(json.dumps(document))
    GOLDEN.write_text(body, "utf-8")
    print(f"{GOLDEN}: {len(document['texts'])} texts, {len(document['pairs'])} pairs")
