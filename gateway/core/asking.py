"""What the question's decisions of the assembly defence read (`gateway.core.answered_values`,
`gateway.core.restated_values`, `gateway.core.retellings`; issue 33): the remembered turns in
the order they were said, the question, the current values each turn holds, the pairs never
decided between and what compile wrote (`Asking`); how much of the question a sentence must say
to be about it (`ON_TOPIC`); and the day a compiled memory says its statements were made on
(`stated_on`): what compile made of a statement is left out only when it was made before the
current one.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import date
from typing import NamedTuple

from gateway.core.asked_values import Asked
from gateway.core.model import Candidate

__all__ = ["ON_TOPIC", "Asking", "stated_on"]

# Of the sentences with a value of the asked kind, those saying at least this share of what the
# best of them says of the question's attribute are about it (chosen on fold A of the dev sets,
# bench/RESULTS.md): one that says less may be another thing with a value of the same kind.
ON_TOPIC = 0.5


class Asking(NamedTuple):
    """What the question's decisions read: the remembered turns in the order they were said,
    the question, the current values of claims each turn holds (by memory id), the pairs never
    decided between, and what compile wrote."""

    ordered: Sequence[Candidate]
    question: Asked
    held: Mapping[str, Sequence[str]]
    apart: Collection[frozenset[str]]
    compiled: Sequence[Candidate]


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def stated_on(memory: Candidate) -> date | None:
    """The last day a compiled memory says its statements were made on: a fact's "On
    2023-08-16 the user said", a digest's "Session digest, 2023-08-11 to 2023-08-16"."""
    first_line = memory.content.partition("\n")[0]
    days: list[date] = []
    for y, m, d in _ISO_DAY.findall(f"{memory.heading} {first_line}"):
        with contextlib.suppress(ValueError):  # "2023-13-45" names no day
            days.append(date(int(y), int(m), int(d)))
    return max(days, default=None)
