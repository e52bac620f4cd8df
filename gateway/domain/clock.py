"""The clock and the id generator as types: injected, so that the pure core never reads either
itself (the shell's `gateway.shell.clock` supplies the real ones)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

__all__ = ["Clock", "IdFactory"]

Clock = Callable[[], datetime]
IdFactory = Callable[[datetime], str]
