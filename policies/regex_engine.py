"""RE2, the linear-time engine policy patterns and redaction detectors run on, and the one
module that reaches under google-re2's Python wrapper.

Memory text is written by agents, i.e. untrusted, so every pattern runs on RE2: matching time
stays linear in the input whatever a pattern or a text holds. The wrapper around RE2's pybind11
core (google-re2 1.1, the range pinned in pyproject.toml) adds a Python frame, and for searches
a generator and a match object per hit, which cost more than the matching on short texts. The
fast path calls the core directly through three private names of that wrapper: `Set._set`,
`_Regexp._regexp` and `re2._Anchor`. When any of them is missing (a release that renames them),
the engine takes the public API instead, which gives the same results, only slower; the tests
run both paths side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, Literal

import re2

__all__ = ["ENGINE", "RegexEngine", "SetAnchor", "SetMatcher", "Spans", "load_engine"]

# A match: the whole match's (start, end) first, then each group's ((-1, -1) when the group
# took no part), as byte offsets into the text.
Spans = Sequence[tuple[int, int]]
# The indexes of a set's patterns that match a text (empty when none does).
SetMatcher = Callable[[bytes], Sequence[int]]
# `search`: a pattern matches anywhere in the text; `whole`: it matches the whole text.
SetAnchor = Literal["search", "whole"]


def _private_api(module: Any) -> bool:
    """Whether `module` still has the wrapper internals the fast path calls."""
    anchor = getattr(getattr(module, "_Anchor", None), "UNANCHORED", None)
    if anchor is None:
        return False
    try:
        regex = module.compile("a")
        matcher = module.Set.SearchSet()
    except (AttributeError, TypeError):
        return False
    return callable(getattr(getattr(regex, "_regexp", None), "Match", None)) and callable(
        getattr(getattr(matcher, "_set", None), "Match", None)
    )


@dataclass(frozen=True, slots=True)
class RegexEngine:
    """RE2 through one module: `private` says whether the fast path (the wrapper's internals)
    is taken; it is only when asked for and present."""

    module: Any
    private: bool

    @property
    def error(self) -> type[Exception]:
        """What `compile` raises for a pattern RE2 rejects."""
        error: type[Exception] = self.module.error
        return error

    def options(self) -> Any:
        options = self.module.Options()
        options.log_errors = False  # RE2 would otherwise print parse errors to stderr
        return options

    def compile(self, pattern: str | bytes) -> Any:
        return self.module.compile(pattern, self.options())

    def escape(self, text: str) -> str:
        escaped: str = self.module.escape(text)
        return escaped

    def set_matcher(self, patterns: Sequence[str], anchor: SetAnchor) -> SetMatcher:
        """One RE2::Set over `patterns`: a single pass says which of them match. Answering
        "does it match" this way builds no match objects: half the cost of a search."""
        options = self.options()
        matcher = (
            self.module.Set.SearchSet(options)
            if anchor == "search"
            else self.module.Set.FullMatchSet(options)
        )
        for pattern in patterns:
            matcher.Add(pattern)
        matcher.Compile()
        if self.private:
            # The wrapper's Match only encodes str and turns [] into None around this call.
            raw: SetMatcher = matcher._set.Match
            return raw
        match = matcher.Match
        return lambda data: match(data) or ()

    def spans(
        self, regex: Any, data: bytes, more: Callable[[bytes, int], bool] | None = None
    ) -> Iterator[Spans]:
        """The spans of each match of the compiled `regex` in `data`, left to right, as
        `finditer` finds them; `more`, when given, says whether a match can still start at or
        after a position (a cheaper necessary condition that ends the search early)."""
        if not self.private:
            for match in regex.finditer(data):
                yield [match.span(group) for group in range(regex.groups + 1)]
            return
        core_match = regex._regexp.Match
        unanchored = self.module._Anchor.UNANCHORED
        position, end = 0, len(data)
        while True:
            spans: Spans = core_match(unanchored, data, position, end)
            if spans[0][0] < 0:
                return
            yield spans
            if position == end:
                return
            # As the wrapper does: after an empty match, step on by one byte.
            position = spans[0][1] if spans[0][1] != position else position + 1
            if more is not None and not more(data, position):
                return


def load_engine(module: ModuleType | Any = re2, *, private: bool = True) -> RegexEngine:
    """The engine over `module` (google-re2's `re2`, or a stand-in with its public API): the
    fast path when `private` and the module has the internals it needs, else the public API."""
    return RegexEngine(module, private and _private_api(module))


# Probed once, on first import: which google-re2 is installed does not change while we run.
ENGINE: Final = load_engine()
