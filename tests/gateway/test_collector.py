"""The serving process's collector settings (gateway.shell.collector), in a fresh interpreter: they
are process-wide, so the test process's own collector is left alone."""

from __future__ import annotations

import json
import subprocess
import sys

from gateway.shell.collector import YOUNG_THRESHOLD

_PROBE = """
import gc, json
from gateway.shell.collector import settle_collector
before = gc.get_threshold()
kept = [[i] for i in range(1000)]
settle_collector()
print(json.dumps({"before": before, "after": gc.get_threshold(), "frozen": gc.get_freeze_count()}))
"""


def test_settling_freezes_what_is_loaded_and_raises_only_the_young_threshold() -> None:
    found = json.loads(
        subprocess.run(
            [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
        ).stdout
    )
    before, after = found["before"], found["after"]
    assert after[0] == YOUNG_THRESHOLD > before[0]
    assert after[1:] == before[1:]
    assert found["frozen"] >= 1000  # at least the lists built before settling
