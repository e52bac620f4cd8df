"""The pure core's one error root. Every error the core raises on purpose is a `CoreError`; each
keeps the built-in base a caller of that stage would catch (a bad input is a `ValueError`, an
unknown version a `LookupError`), so the tree reads:

    CoreError
    ├── AssemblyInputError (ValueError)    inputs break the assembly's preconditions
    ├── RankingProfileError (ValueError)   a profile that cannot be built or read back
    ├── VerdictError (ValueError)          a verdict that names what was not judged
    ├── TokenizerError                     an encoding that cannot be loaded offline
    └── UnknownVersionError (LookupError)  a receipt names a version this gateway does not build
"""

from __future__ import annotations

__all__ = ["CoreError"]


class CoreError(Exception):
    """An error the pure core raises on purpose."""
