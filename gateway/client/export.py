"""Where a streamed export goes: a file written whole or not at all, or a caller's binary file."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, TypeVar

__all__ = ["ExportSink", "Exported", "Sink"]

T_co = TypeVar("T_co", covariant=True)


class Sink(Protocol[T_co]):
    """Where a streamed body goes, chunk by chunk; `finish` says what was written."""

    def write(self, chunk: bytes) -> None: ...

    def finish(self) -> T_co: ...


@dataclass(frozen=True, slots=True)
class Exported:
    """What was written: JSONL lines (receipts, then the checkpoint), bytes, their SHA-256."""

    lines: int
    bytes: int
    sha256: str


class ExportSink:
    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._digest = hashlib.sha256()
        self._lines = 0
        self._bytes = 0

    @classmethod
    @contextlib.contextmanager
    def open(cls, destination: str | os.PathLike[str] | IO[bytes]) -> Iterator[ExportSink]:
        if not isinstance(destination, str | os.PathLike):
            yield cls(destination)
            return
        path = Path(destination)
        # Beside the target, so the rename is atomic: a reader never sees half an export.
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(handle, "wb") as file:
                yield cls(file)
            Path(temporary).replace(path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)
        self._digest.update(chunk)
        self._lines += chunk.count(b"\n")
        self._bytes += len(chunk)

    def finish(self) -> Exported:
        self._file.flush()
        return Exported(self._lines, self._bytes, self._digest.hexdigest())
