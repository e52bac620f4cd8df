"""The knowledge bench's folds: the same split in every process, both data sets loaded, each
fold holding cases of both (the held-out figure needs cases to be held out)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.knowledge import DATASET, LME_DATASET, fold_of, load_cases, load_lme_cases

pytestmark = pytest.mark.skipif(
    not (DATASET.exists() and LME_DATASET.exists()), reason="../shared/bench is not here"
)


def test_folds_are_the_same_in_every_process() -> None:
    ids = [c.case_id for c in load_cases()] + [c.case_id for c in load_lme_cases()]
    here = "".join(fold_of(i) for i in ids)
    script = (
        "from bench.knowledge import fold_of, load_cases, load_lme_cases;"
        "print(''.join(fold_of(c.case_id) for c in load_cases() + load_lme_cases()))"
    )
    there = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"PYTHONHASHSEED": "7"},
    ).stdout.strip()
    assert here == there
    assert set(here) == {"A", "B"}


def test_both_sets_load_with_both_folds() -> None:
    dev, lme = load_cases(), load_lme_cases()
    assert len(dev) == 70 and len(lme) == 23
    for cases in (dev, lme):
        assert {c.fold for c in cases} == {"A", "B"}
    assert all(c.budget == 2000 and c.sessions for c in lme)
    # Sessions in date order, dates as ISO (day and hour).
    first = lme[0].sessions
    assert [s["date"] for s in first] == sorted(s["date"] for s in first)
    assert "T" in first[0]["date"] and "/" not in first[0]["date"]
