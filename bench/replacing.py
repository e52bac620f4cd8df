"""Fit the weighing of `gateway.core.replacing_turns` (issue 33, rule `weighed_turns`) on the
knowledge-update sets it may read, and say what it does on those it may not.

Each set's cases are imported and asked as ``bench knowledge`` asks them, under the assembler
before the rule (``--assembler``, default ``assemble/2026-12-06.1``), so what is fitted is what
the rule is handed: the bundle's remembered user turns in full, in rank order. So is each update
case's stable reading (`bench.knowledge.stable`: the case as it reads had its value never
changed), so that the fit sees as many questions whose first answer still holds as questions
whose answer changed: fitted on the update cases alone, the weighing learns that what was said
first is stale, which in those sets it nearly always is, and leaves out the value of two in
five of the questions whose answer never changed. Of a question the rule reads (`asked_values.asked`,
of the user's own), each pair of the first `replacing_turns.READ` of those turns, older and
newer, is labelled by the case's annotation: leaving the older out helps when it holds the
stale value (more when the newer holds the current one), harms when it holds the current value
(weighted 3: a fact lost), and is neither otherwise. A logistic regression over
`replacing_turns.signals` (signals centred and scaled, L2, fixed steps from zero: the same
weights every run) is fitted on the ``--fit`` sets, and, for each of them in turn, on the
others: what a fitted set scores under the weighing fitted without it ("left out") is what a set
nobody fitted on would, and is what the signals and the threshold are chosen by. The threshold
is the lowest of `THRESHOLDS` at which the fitted sets, left out, keep the value of `KEPT` (95 %)
of the no-update cases, as written and as the stable readings.

Then every set, fitted or not, is scored as ``bench knowledge`` scores it, its bundles with the
older turns the weighing leaves out taken out (their room is not refilled here: the end-to-end
figure is ``bench knowledge`` under the new assembler). Printed: the weighing as the literal
`replacing_turns.WEIGHING` holds, and per set the clean rate before and after (and, of a fitted
set, after the weighing fitted without it), the cases whose current value a left-out turn took
with it, and the no-update cases (as written and stable readings) whose value the bundle keeps,
at each threshold.

    python -m bench replacing [--fit SET,...] [--measure SET,...]

A SET is ``dev`` (the 70 hand-written cases) or a name ``bench/knowledge_updates_NAME.json``
has (``blind``, ``blind2``, ..., ``written_here``).
"""

from __future__ import annotations

import argparse
import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

import numpy as np

from bench.harness import embedded_postgres, markdown_table, new_database, serve
from bench.knowledge import DATASET, Case, load_cases, run_cases, score, stable
from gateway.core.asked_values import Asked, asked
from gateway.core.replacing_turns import (
    READ,
    SIGNALS,
    WIDE,
    Signals,
    Turn,
    Weighing,
    Weight,
    says_enough,
    signals,
)

HERE = Path(__file__).resolve().parent
BEFORE = "assemble/2026-12-06.1"
FIT = ("dev", "written_here", "blind", "blind2", "blind4", "blind7")
MEASURE = ("blind3", "blind5", "blind6", "blind8", "blind9")
THRESHOLDS = (0.3, 0.4, 0.5, 0.6)
# The share of no-update cases (as written and the stable readings of the update cases) whose
# value the fitted sets keep, left out of the fit, at the threshold chosen: the bar.
KEPT = 0.95
# And the fewest content words a newer turn says to be weighed (`Weighing.least_words`).
LEAST_WORDS = 4

# A memory in full of a bundle: "[m3 episodic .6 20240604] user, turn 1" and its text.
_MEMORY = re.compile(
    r"^\[m(?P<ref>\d+) (?P<type>\w+) [.\d]+ (?P<day>\d{8})\] (?P<role>user|assistant), "
    r"turn (?P<turn>\d+)\n(?P<text>.*?)(?=\n\n\[m\d+ |\n\n## |\n*\Z)",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Shown:
    """A user's turn shown in full: its reference, when it was said (day, then turn), as read."""

    ref: str
    said: tuple[date, int]
    turn: Turn


AskedCases = list[tuple[Case, Asked | None, str]]  # a set's cases, each as the rule reads it


@dataclass(frozen=True, slots=True)
class Pair:
    older: Shown
    newer: Shown
    signals: Signals


def load_set(name: str) -> list[Case]:
    return load_cases(DATASET if name == "dev" else HERE / f"knowledge_updates_{name}.json")


def shown_turns(bundle: str) -> list[Shown]:
    """The user's first `WIDE` remembered turns a bundle shows in full, in its order (the
    rank's), the first said of them marked."""
    read = [
        (m, date.fromisoformat(f"{m['day'][:4]}-{m['day'][4:6]}-{m['day'][6:]}"))
        for m in _MEMORY.finditer(bundle)
        if m["type"] == "episodic" and m["role"] == "user"
    ][:WIDE]
    first = min(range(len(read)), key=lambda i: (read[i][1], int(read[i][0]["turn"])), default=0)
    return [
        Shown(f"[m{m['ref']} ", (day, int(m["turn"])), Turn(m["text"], day, rank, rank == first))
        for rank, (m, day) in enumerate(read)
    ]


def read_question(question: str) -> Asked | None:
    """The question as the rule reads it, or None when the rule does not read it."""
    read = asked(question, names=True, statements=True, updates=True, weighed=True)
    return read if read is not None and read.weighed else None


def pairs(question: Asked, bundle: str, least_words: int) -> list[Pair]:
    """The pairs the rule weighs: of the first `READ` turns, older and newer, the newer saying
    `least_words` content words or more."""
    turns = shown_turns(bundle)[:READ]
    return [
        Pair(older, newer, signals(question.stems, older.turn, newer.turn))
        for older in turns
        for newer in turns
        if older.said < newer.said and says_enough(newer.turn, least_words)
    ]


def label(case: Case, pair: Pair) -> tuple[float, float]:
    """The label and the weight of leaving the older turn out."""
    older, newer = pair.older.turn.text.casefold(), pair.newer.turn.text.casefold()
    gold, stale = case.gold.casefold(), case.stale.casefold()
    if gold in older:
        return 0.0, 3.0  # the current value would go with it
    if stale and stale in older:
        return 1.0, 1.0 if gold in newer else 0.5
    return 0.0, 0.3


@dataclass(slots=True)
class Counts:
    """A set's cases scored on bundles as built and as shown: clean, current values lost, and
    the no-update cases still clean."""

    clean: int = 0
    lost: int = 0
    kept: int = 0
    no_update: int = 0

    def add(self, case: Case, built: str, shown: str) -> None:
        was, now = score(case, built), score(case, shown)
        self.clean += now["clean"]
        self.lost += was["gold"] and not now["gold"]
        if not case.stale:  # a no-update case, or an update case's stable reading
            self.no_update += 1
            self.kept += now["clean"]


def fit(rows: Sequence[tuple[Signals, float, float]], threshold: float) -> Weighing:
    x = np.array([r[0] for r in rows], dtype=float)
    y = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows])
    means, scales = x.mean(axis=0), x.std(axis=0)
    scales[scales == 0] = 1.0
    z = (x - means) / scales
    theta, bias = np.zeros(z.shape[1]), 0.0
    for _ in range(3000):
        p = 1 / (1 + np.exp(-(z @ theta + bias)))
        error = (p - y) * w / w.sum()
        theta -= z.T @ error + theta / len(y)  # a unit step; the second term is the L2
        bias -= error.sum()
    return Weighing(
        bias=round(float(bias), 4),
        weights=tuple(
            Weight(name, round(float(t), 4), round(float(m), 4), round(float(s), 4))
            for name, t, m, s in zip(SIGNALS, theta, means, scales, strict=True)
        ),
        threshold=threshold,
        least_words=LEAST_WORDS,
    )


def left_out(weighing: Weighing, question: Asked, bundle: str) -> str:
    """The bundle without the older turns the weighing leaves out."""
    out = {
        p.older.ref
        for p in pairs(question, bundle, weighing.least_words)
        if weighing.probability(p.signals) > weighing.threshold
    }
    parts = re.split(r"\n\n(?=\[m\d+ )", bundle)
    return "\n\n".join(part for part in parts if not any(part.startswith(r) for r in out))


def literal(weighing: Weighing) -> str:
    """The weighing as `replacing_turns.WEIGHING` is written."""
    rows = "".join(
        f"        Weight({w.signal!r}, {w.weight!r}, {w.mean!r}, {w.scale!r}),\n".replace("'", '"')
        for w in weighing.weights
    )
    return (
        f"WEIGHING = Weighing(\n    bias={weighing.bias!r},\n    weights=(\n{rows}    ),\n"
        f"    threshold={weighing.threshold!r},\n    least_words={weighing.least_words!r},\n)"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench replacing", description=__doc__)
    parser.add_argument("--fit", default=",".join(FIT), help="the sets the weighing is fitted on")
    parser.add_argument("--measure", default=",".join(MEASURE), help="the sets it may not read")
    parser.add_argument(
        "--assembler", default=BEFORE, help="the assembler the bundles are built by"
    )
    args = parser.parse_args(argv)
    fitted, measured = args.fit.split(","), args.measure.split(",")
    sets = {name: load_set(name) for name in (*fitted, *measured)}
    stables = {
        name: [s for c in cases if (s := stable(c)) is not None] for name, cases in sets.items()
    }
    with embedded_postgres() as server:
        database = new_database(server, "bench_replacing")
        with serve(database, assembler=args.assembler) as app:

            def asked_of(cases: list[Case]) -> AskedCases:
                records = asyncio.run(run_cases(app.base_url, app.headers, cases, (), False))[0]
                return [
                    (case, read_question(case.question), r["bundle"])
                    for case, r in zip(cases, records, strict=True)
                ]

            asked_by = {name: asked_of(cases) for name, cases in sets.items()}
            stable_by = {name: asked_of(cases) for name, cases in stables.items()}

    def rows_of(names: Sequence[str]) -> list[tuple[Signals, float, float]]:
        return [
            (pair.signals, *label(case, pair))
            for name in names
            for case, question, bundle in (*asked_by[name], *stable_by[name])
            if question is not None
            for pair in pairs(question, bundle, LEAST_WORDS)
        ]

    weighing = fit(rows_of(fitted), THRESHOLDS[0])
    # Each fitted set scored under the weighing fitted on the others: what a set nobody fitted
    # on would score, without spending the held-out sets on choosing.
    without = {
        name: fit(rows_of([other for other in fitted if other != name]), THRESHOLDS[0])
        for name in fitted
    }
    table, kept_left_out = _scored(weighing, without, asked_by, stable_by, measured)
    # The threshold: the lowest at which the fitted sets, each under the weighing fitted
    # without it, keep the value of at least 95 % of the cases where it never changed.
    chosen = next(
        (t for t in THRESHOLDS if kept_left_out[t].kept >= KEPT * kept_left_out[t].no_update),
        THRESHOLDS[-1],
    )
    rows = len(rows_of(fitted))
    print(f"{rows} pairs from {', '.join(fitted)} and their stable readings")
    print(f"signals: {', '.join(SIGNALS)}; threshold chosen: {chosen}")
    print(literal(replace(weighing, threshold=chosen)))
    print(
        markdown_table(
            [
                "threshold",
                "set",
                "n",
                "clean % before",
                "clean % after",
                "clean % after, left out of the fit",
                "current lost (left out)",
                "no-update kept before",
                "no-update kept after (left out)",
            ],
            table,
        )
    )
    return 0


def _scored(
    weighing: Weighing,
    without: dict[str, Weighing],
    asked_by: dict[str, AskedCases],
    stable_by: dict[str, AskedCases],
    measured: Sequence[str],
) -> tuple[list[list[object]], dict[float, Counts]]:
    """The table's rows at each threshold, and the no-update cases the fitted sets keep under
    the weighing fitted without each (`without`)."""
    fitted = list(without)
    table: list[list[object]] = []
    kept_left_out: dict[float, Counts] = {}
    for threshold in THRESHOLDS:
        kept_left_out[threshold] = Counts()
        for name in (*fitted, *measured):
            by = {"after": replace(weighing, threshold=threshold)}
            if name in fitted:
                by["left out"] = replace(without[name], threshold=threshold)
            # The cases as written, then their stable readings (no-update counts only).
            counts = {key: (Counts(), Counts()) for key in ("before", *by)}
            for index, cases in enumerate((asked_by[name], stable_by[name])):
                for case, question, bundle in cases:
                    counts["before"][index].add(case, bundle, bundle)
                    for key, used in by.items():
                        shown = bundle if question is None else left_out(used, question, bundle)
                        counts[key][index].add(case, bundle, shown)
            n = len(asked_by[name])
            before, after = counts["before"][0], counts["after"][0]
            out = counts["left out"][0] if name in fitted else None
            if name in fitted:
                for part in counts["left out"]:
                    kept_left_out[threshold].kept += part.kept
                    kept_left_out[threshold].no_update += part.no_update
            table.append(
                [
                    threshold,
                    name + (" (fitted)" if name in fitted else ""),
                    n,
                    round(100 * before.clean / n, 1),
                    round(100 * after.clean / n, 1),
                    "" if out is None else round(100 * out.clean / n, 1),
                    after.lost if out is None else f"{after.lost} ({out.lost})",
                    _kept(counts["before"]),
                    _kept(counts["after"])
                    + ("" if name not in fitted else f" ({_kept(counts['left out'])})"),
                ]
            )
    return table, kept_left_out


def _kept(counts: tuple[Counts, Counts]) -> str:
    """The no-update cases that keep their value, as written and as the stable readings."""
    return f"{counts[0].kept + counts[1].kept}/{counts[0].no_update + counts[1].no_update}"
