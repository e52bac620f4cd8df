"""Identity from self-introductions (issue 33): what each version of the `rules` extractor reads
of messages in which people introduce themselves, and of messages that only look like it.

Data (CC0, written by helpers that read nothing of this project): ``bench/introductions_blind.json``,
120 messages written after a first form of `rules/2026-12-06.1` and measured once before any was
read: 80 introductions in shapes the request listed (greetings, signatures, parentheses, "X
here", "I work at Y as Z", plans said many ways, lowercase and typos) and 40 traps (someone else
introduced, a place not an employer, idioms, plans that are intentions, hypotheticals); and
``bench/introductions_blind2.json`` (``--cases``), 100 first messages to a support chat, an
assistant or a helpdesk bot, written by a second hand told no shape; ``blind3.json`` (a third
hand, settings varied, no shape named) and ``blind4.json`` (a fourth, at least fifteen settings,
registers and positions varied, no shape named). The protocol, which set was read when and which
never, is in bench/RESULTS.md; ``blind4.json`` is the one no one here has read. Each message
carries the identity claims it states of its speaker (`user.name`, `user.employer`,
`user.role`, `account.plan`), values as written.

Each message is one user turn compiled alone. A claim found counts as right when its value,
compared case-insensitively without surrounding punctuation, is the expected one; per key and
in all: expected, found, right, precision (right / found) and recall (right / expected); and
the traps (messages expecting nothing) that gave any identity claim. Folds as `bench knowledge`
makes them (`fold_of`: the first byte of the SHA-256 of the id, even for A): the whole set was
measured once before any of it was read; fold A was then read to develop on and fold B was not,
so fold B was the held-out figure until the fourth set was written. ``--show`` prints a fold's messages whose claims differ from
the expected ones, under the newest version.

With ``--longmemeval``, real user text instead: every distinct user turn of
``../shared/bench/longmemeval_s_dev.jsonl.gz`` compiled alone by the two newest versions, and
the identity claims only one of them makes, counted and listed (there is no annotation: each is
read for whether it is right).

    python -m bench introductions [--cases PATH] [--fold A|B] [--show] [--longmemeval]
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench.harness import markdown_table, write_result
from bench.knowledge import fold_of
from bench.longmemeval import DATASET as LONGMEMEVAL
from gateway.core.extraction import EXTRACTS, RULES, Episode

__all__ = ["IDENTITY", "Counts", "Message", "changed", "claims_of", "load", "main", "scored"]

DATASET = Path(__file__).resolve().parent / "introductions_blind.json"
IDENTITY = ("user.name", "user.employer", "user.role", "account.plan")
_AT = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
_EDGES = " \t\n.,;:!?\"'()[]"


@dataclass(frozen=True, slots=True)
class Message:
    case_id: str
    text: str
    expected: Mapping[str, str]


@dataclass(slots=True)
class Counts:
    """Per claim key: expected, found and right; and the traps that gave a claim."""

    expected: dict[str, int] = field(default_factory=dict)
    found: dict[str, int] = field(default_factory=dict)
    right: dict[str, int] = field(default_factory=dict)
    traps: int = 0
    traps_fired: int = 0

    def row(self, keys: Sequence[str]) -> tuple[int, int, int]:
        return (
            sum(self.expected.get(k, 0) for k in keys),
            sum(self.found.get(k, 0) for k in keys),
            sum(self.right.get(k, 0) for k in keys),
        )


def load(path: Path = DATASET) -> list[Message]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [Message(c["id"], c["text"], dict(c["expected"])) for c in raw["cases"]]


def _same(found: str, expected: str) -> bool:
    return found.strip(_EDGES).casefold() == expected.strip(_EDGES).casefold()


def claims_of(message: Message, version: str) -> dict[str, str]:
    """The identity claims extractor `version` reads of `message`, as one user turn alone."""
    episodes = [Episode((message.case_id,), "user", message.text, _AT)]
    facts = EXTRACTS[version](episodes, (), None)
    return {f.claim_key: f.value or "" for f in facts if f.claim_key in IDENTITY}


def scored(messages: Sequence[Message], version: str) -> Counts:
    """What extractor `version` reads of `messages`, each as one user turn alone."""
    counts = Counts()
    for message in messages:
        claims = claims_of(message, version)
        if not message.expected:
            counts.traps += 1
            counts.traps_fired += bool(claims)
        for key in IDENTITY:
            expected, got = message.expected.get(key), claims.get(key)
            counts.expected[key] = counts.expected.get(key, 0) + (expected is not None)
            counts.found[key] = counts.found.get(key, 0) + (got is not None)
            right = expected is not None and got is not None and _same(got, expected)
            counts.right[key] = counts.right.get(key, 0) + right
    return counts


def _identity(text: str, version: str) -> set[tuple[str, str]]:
    facts = EXTRACTS[version]([Episode(("turn",), "user", text, _AT)], (), None)
    return {(f.claim_key, f.value or "") for f in facts if f.claim_key in IDENTITY}


def changed(
    texts: Iterable[str], older: str, newer: str
) -> tuple[Counter[tuple[str, str]], list[tuple[tuple[str, str], str]]]:
    """Of user turns each compiled alone: the identity claims only `older` makes (counted), and
    those only `newer` makes (with the turn's opening)."""
    gone: Counter[tuple[str, str]] = Counter()
    added: list[tuple[tuple[str, str], str]] = []
    for text in texts:
        before, after = _identity(text, older), _identity(text, newer)
        gone.update(before - after)
        added.extend((claim, " ".join(text.split())[:100]) for claim in sorted(after - before))
    return gone, added


def _user_turns(path: Path) -> list[str]:
    """Every distinct user turn of a LongMemEval_S file, in file order."""
    seen: dict[str, None] = {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            for session in json.loads(line)["sessions"]:
                for turn in session["turns"]:
                    if turn["role"] == "user":
                        seen.setdefault(turn["content"], None)
    return list(seen)


def _real_text() -> int:
    older, newer = list(EXTRACTS)[-2:]
    turns = _user_turns(LONGMEMEVAL)
    gone, added = changed(turns, older, newer)
    print(f"{len(turns)} distinct user turns of {LONGMEMEVAL.name}, rules/{older} -> rules/{newer}")
    print(f"identity claims only {older} makes: {sum(gone.values())}")
    for (key, value), count in sorted(gone.items()):
        print(f"  {key} = {value!r} x{count}")
    print(f"identity claims only {newer} makes: {len(added)}")
    for (key, value), text in added:
        print(f"  {key} = {value!r}  <- {text}")
    return 0


def _rate(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}" if whole else "-"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench introductions", description=__doc__)
    parser.add_argument("--cases", type=Path, default=DATASET, help="a message file")
    parser.add_argument("--fold", choices=("A", "B"), help="only this fold's messages")
    parser.add_argument("--show", action="store_true", help="print the messages read wrong")
    parser.add_argument("--longmemeval", action="store_true", help="real user text instead")
    args = parser.parse_args(argv)
    if args.longmemeval:
        return _real_text()
    messages = [m for m in load(args.cases) if args.fold in (None, fold_of(m.case_id))]
    if args.show:
        for message in messages:
            claims = claims_of(message, RULES[1])
            wrong = {
                k: claims.get(k)
                for k in IDENTITY
                if not _same(claims.get(k) or "", message.expected.get(k) or "")
            }
            if wrong:
                print(f"{message.case_id}: {message.text}\n  expected {dict(message.expected)}")
                print(f"  read     {claims}")
    rows: list[list[object]] = []
    for version in EXTRACTS:
        counts = scored(messages, version)
        for keys, label in [*(((k,), k) for k in IDENTITY), (IDENTITY, "all")]:
            expected, found, right = counts.row(keys)
            rows.append(
                [
                    f"rules/{version}",
                    label,
                    expected,
                    found,
                    right,
                    _rate(right, found),
                    _rate(right, expected),
                    f"{counts.traps_fired}/{counts.traps}" if label == "all" else "",
                ]
            )
    header = ["extractor", "claim", "expected", "found", "right", "precision %", "recall %", "traps that gave a claim"]  # fmt: skip
    fold = f", fold {args.fold}" if args.fold else ""
    print(f"{len(messages)} messages from {args.cases.name}{fold}")
    print(markdown_table(header, rows))
    print("written", write_result("introductions", {"cases": args.cases.name, "rows": rows}))
    return 0
