"""The proofs benchmark (`python -m bench proofs`) runs, and its methods agree: it asserts that
the per-call, hashed-tree and tiled proofs are equal on every index it times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import harness, proofs


def test_the_proofs_benchmark_runs_and_its_methods_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(harness, "OUT_DIR", tmp_path)
    assert proofs.main(["--sizes", "700,1300", "--exported", "40", "--samples", "5"]) == 0
    printed = capsys.readouterr().out
    assert "from tiles p50 ms" in printed and "hashes read" in printed
    (written,) = tmp_path.glob("proofs-*.json")
    result = json.loads(written.read_text())
    assert result["single_1300"]["hashes_read_tiles_at_most"] == 1300 // 256 + 512
    assert result["sizes"]["700"]["export_hashes_read_tiled"] <= 700 + 700 // 256
