"""Where a secret split between a memory's heading and its content can lie: the stretch of text
around the joint of the two (both folded, see policies/textnorm.py) that each detector searches
for one (`window`), and how far into a long text the pre-check must read for one
(`reach_back`, `reach_forward`).

A match across the joint is made of the detector's characters only (`CLASSES` in
policies/patterns.py), so it lies in the run of them around the joint. Searching that run alone,
with two characters more on each side (the first of which no match can hold: word boundaries
and `across_ok` look at them), finds the same matches, in the same order, as searching the
whole joined text: no match elsewhere can reach into the run. Runs are measured on a bounded
tail and head first, so a long text is not copied to find a short run.
"""

from __future__ import annotations

from typing import Final

from policies.patterns import CLASSES

__all__ = ["reach_back", "reach_forward", "window"]

_PROBE: Final = 128


def _back(text: str, chars: str) -> int:
    """How many characters of `chars` end `text`."""
    tail = text[-_PROBE:]
    run = len(tail) - len(tail.rstrip(chars))
    if run < len(tail) or len(tail) == len(text):
        return run
    return len(text) - len(text.rstrip(chars))  # the run fills the probe: measure it whole


def _forward(text: str, chars: str) -> int:
    """How many characters of `chars` start `text`."""
    head = text[:_PROBE]
    run = len(head) - len(head.lstrip(chars))
    if run < len(head) or len(head) == len(text):
        return run
    return len(text) - len(text.lstrip(chars))


_SPACE: Final = " \t\n\r\f\v"
# Every detector's characters but white space; white space only api tokens repeat ("Bearer
# <token>"). Card numbers (at most 37 characters), phone numbers (36) and IBANs (44) reach at
# most `_BOUNDED` characters into either text.
_RUN: Final = "".join(sorted(set("".join(CLASSES.values())) - set(_SPACE)))
_BOUNDED: Final = 48


def reach_back(heading: str) -> int:
    """How far into `heading` (from its end) a match across the joint can reach: a run, white
    space and another run of detector characters ("Bearer" and a token's start), or 48."""
    tail = heading[-_PROBE:]
    rest = tail.rstrip(_RUN).rstrip(_SPACE).rstrip(_RUN)
    if not rest and len(tail) < len(heading):
        rest = heading.rstrip(_RUN).rstrip(_SPACE).rstrip(_RUN)
        return max(len(heading) - len(rest), _BOUNDED)
    return max(len(tail) - len(rest), _BOUNDED)


def reach_forward(content: str) -> int:
    """As `reach_back`, into `content` from its start."""
    head = content[:_PROBE]
    rest = head.lstrip(_RUN).lstrip(_SPACE).lstrip(_RUN)
    if not rest and len(head) < len(content):
        rest = content.lstrip(_RUN).lstrip(_SPACE).lstrip(_RUN)
        return max(len(content) - len(rest), _BOUNDED)
    return max(len(head) - len(rest), _BOUNDED)


_TOKEN_WIDE: Final = CLASSES["api_token"]
# An api token but "Bearer <token>" holds no white space.
_TOKEN_NARROW: Final = _TOKEN_WIDE.translate({ord(c): None for c in _SPACE})


def window(
    name: str, texts: tuple[str, str], joint: str, *, bearer: bool
) -> tuple[str, int] | None:
    """The stretch of `heading + joint + content` (`texts`, folded) that a match of detector
    `name` across the joint lies in, and where it starts in the heading; None when no such
    match can exist. `bearer`: whether "bearer" (any case) occurs in the joined text; without
    one, an api token holds no white space, and none crosses a newline."""
    heading, content = texts
    if not heading or not content:
        return None
    chars = CLASSES[name]
    if name == "api_token" and not bearer:
        chars = _TOKEN_NARROW
    if heading[-1] not in chars or content[0] not in chars or (joint and joint not in chars):
        return None
    low = max(len(heading) - _back(heading, chars) - 2, 0)
    right = _forward(content, chars) + 2
    return heading[low:] + joint + content[:right], low
