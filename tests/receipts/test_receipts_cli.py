"""``python -m receipts verify``: exit 0 valid, 1 invalid (with the code), 2 usage error."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from receipts.__main__ import main

if TYPE_CHECKING:
    from tests.receipts.conftest import LogBuilder

VECTORS = Path(__file__).parent / "vectors"
KEYRING = str(VECTORS / "keyring.json")
EXPORT = str(VECTORS / "export_good.jsonl")


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = main(list(argv), out)
    return status, out.getvalue()


def test_module_entry_point_verifies_the_golden_export() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "receipts", "verify", EXPORT, "--keyring", KEYRING],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("VALID  tenant acme: 5 receipts, seq 1..5\n")
    assert "the export is that log" in result.stdout


def test_bundle_and_trusted_checkpoint() -> None:
    status, out = _run(
        "verify", EXPORT, "--keyring", KEYRING,
        "--checkpoint", str(VECTORS / "checkpoint_old.txt"),
        "--bundle", str(VECTORS / "bundle_rcp-acme-0003.txt"), "--receipt", "rcp-acme-0003",
    )  # fmt: skip
    assert status == 0
    assert "rcp-acme-0003 at seq 3: bundle sha256 matches" in out
    assert "checkpoint of size 3 is consistent" in out


def test_invalid_export_prints_the_code(tmp_path: Path, log5: LogBuilder) -> None:
    lines = log5.lines(checkpoint=log5.checkpoint())
    del lines[1]
    export = tmp_path / "export.jsonl"
    export.write_text("".join(lines), encoding="utf-8")
    status, out = _run("verify", str(export), "--keyring", KEYRING)
    assert status == 1
    assert out.startswith("INVALID seq_gap: ")


def test_tampered_bundle_and_missing_receipt(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.txt"
    bundle.write_bytes((VECTORS / "bundle_rcp-acme-0003.txt").read_bytes() + b" ")
    status, out = _run(
        "verify", EXPORT, "--keyring", KEYRING, "--bundle", str(bundle), "--receipt",
        "rcp-acme-0003",
    )  # fmt: skip
    assert (status, out.split(":")[0]) == (1, "INVALID bundle_mismatch")
    status, out = _run("verify", EXPORT, "--keyring", KEYRING, "--receipt", "nope")
    assert (status, out.split(":")[0]) == (1, "INVALID not_found")


def test_not_utf8_export_is_invalid(tmp_path: Path) -> None:
    export = tmp_path / "export.jsonl"
    export.write_bytes(b"\xff\xfe\n")
    status, out = _run("verify", str(export), "--keyring", KEYRING)
    assert (status, out.split(":")[0]) == (1, "INVALID malformed")


def test_newer_receipts_and_missing_checkpoint_are_reported(
    tmp_path: Path, log5: LogBuilder
) -> None:
    checkpoint = log5.checkpoint(3)
    export = tmp_path / "export.jsonl"
    export.write_text("".join(log5.lines(checkpoint=checkpoint)), encoding="utf-8")
    status, out = _run("verify", str(export), "--keyring", KEYRING)
    assert status == 0
    assert "2 newer receipts not yet covered" in out
    export.write_text("".join(log5.lines()), encoding="utf-8")
    status, out = _run("verify", str(export), "--keyring", KEYRING)
    assert status == 1 and out.startswith("INVALID incomplete:")
    status, out = _run("verify", str(export), "--keyring", KEYRING, "--allow-unanchored")
    assert status == 0
    assert "inclusion in the signed log NOT verified" in out
    export.write_text("", encoding="utf-8")  # an empty file proves nothing
    assert _run("verify", str(export), "--keyring", KEYRING)[0] == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", EXPORT, "--keyring", "/nonexistent/keyring.json"],
        ["verify", "/nonexistent/export.jsonl", "--keyring", KEYRING],
        ["verify", EXPORT, "--keyring", KEYRING, "--checkpoint", "/nonexistent"],
        ["verify", EXPORT, "--keyring", EXPORT],  # not a keyring
        ["verify", EXPORT, "--keyring", KEYRING, "--bundle", EXPORT],  # bundle without --receipt
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, _ = _run(*argv)
    assert status == 2
    assert capsys.readouterr().err.startswith("receipts: ")


@pytest.mark.parametrize("argv", [[], ["verify"], ["verify", EXPORT], ["sign", EXPORT]])
def test_argument_errors_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2


def test_filtered_export_is_not_called_gapless(tmp_path: Path, log5: LogBuilder) -> None:
    """A filtered export (seq 1, 2 and 5 of 5) has a gap by construction: the report says which
    links were followed and that the gap stands on inclusion proofs, never "gapless"."""
    picked = [log5.entries[0], log5.entries[1], log5.entries[4]]
    export = tmp_path / "export.jsonl"
    export.write_text(
        "".join(log5.lines(picked, checkpoint=log5.checkpoint(), proof_size=5)), encoding="utf-8"
    )
    status, out = _run("verify", str(export), "--keyring", KEYRING)
    assert status == 0, out
    assert "gapless" not in out
    chain = next(line for line in out.splitlines() if line.lstrip().startswith("chain"))
    assert "1 prev link between consecutive seqs" in chain, chain
    assert "1 gap (2 receipts not exported) covered by inclusion proofs" in chain, chain


def test_whole_export_says_which_links_were_checked(tmp_path: Path, log5: LogBuilder) -> None:
    export = tmp_path / "export.jsonl"
    export.write_text("".join(log5.lines(checkpoint=log5.checkpoint())), encoding="utf-8")
    status, out = _run("verify", str(export), "--keyring", KEYRING)
    assert status == 0, out
    chain = next(line for line in out.splitlines() if line.lstrip().startswith("chain"))
    assert "gapless: seq 1..5, every prev links to the seq before, back to genesis" in chain
