"""Generated receipt signing keys: made once, shared by processes that start together."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gateway.shell.settings import Settings
from gateway.shell.signing import generated_key_paths, load_signer


def test_workers_starting_together_share_one_keyring(tmp_path: Path) -> None:
    # `serve --workers N` starts N runtimes on a fresh data dir at once: each must end up with
    # the keys on disk, or receipts signed by some workers would not verify with keyring.json.
    settings = Settings(data_dir=tmp_path)
    with ThreadPoolExecutor(8) as pool:
        signers = list(pool.map(lambda _: load_signer(settings), range(16)))
    keyring_path, private_path = generated_key_paths(tmp_path)
    on_disk = keyring_path.read_text()
    assert {str(s.keyring.to_json()) for s in signers} == {str(signers[0].keyring.to_json())}
    assert load_signer(settings).keyring.to_json() == signers[0].keyring.to_json()
    assert '"k1' in on_disk and private_path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keys"]  # no staging left behind


def test_a_keys_directory_without_a_keyring_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "ed25519.pem").write_text("left over")
    with pytest.raises(RuntimeError, match=r"holds no keyring\.json"):
        load_signer(Settings(data_dir=tmp_path))
