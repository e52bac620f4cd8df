"""Whether two stated values are one value in two spellings ("Fridays" / "Friday", "about 6
months" / "six months", "Mint" / "Mint Mobile"): a value restated in another spelling is no
change, so no decision of the assembly defence (`gateway.core.current_values`) is made of it.
"""

from __future__ import annotations

import re

from gateway.core.extraction.typed_values import TypedValue, typed_values
from gateway.core.supersession import mentions

__all__ = ["one_value", "same"]


def same(a: str, b: str) -> bool:
    """One value in two spellings: "Fridays" / "Friday" (case, a trailing period), or one
    amount of one dimension however the words after it run ("five bullets", "five bulleted
    statements")."""

    def folded(text: str) -> str:
        return re.sub(r"(?<=\w)s\b", "", " ".join(text.casefold().strip(" .!'\"").split()))

    if folded(a) == folded(b):
        return True
    typed_a, typed_b = typed_values(a), typed_values(b)
    return (
        len(typed_a) == len(typed_b) == 1
        and typed_a[0].dimension == typed_b[0].dimension
        and typed_a[0].size is not None
        and typed_a[0].size == typed_b[0].size
    )


def one_value(a: TypedValue, b: TypedValue) -> bool:
    """Two typed values that are one: of one dimension and size ("about 6 months" / "six
    months"), or one text in two spellings."""
    if a.dimension == b.dimension and a.size is not None and a.size == b.size:
        return True
    if a.dimension == b.dimension == "name":  # "Mint" and "Mint Mobile", "Dr. Lin" and "Lin"
        return mentions(a.text, b.text) or mentions(b.text, a.text)
    return same(a.text, b.text)
