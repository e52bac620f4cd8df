"""The console's session cookie and CSRF tokens, with real keys and a fixed clock."""

from __future__ import annotations

from gateway.http.console.session import SESSION_SECONDS, SessionSealer
from receipts import Signer, generate_keyring, load_private_key

KEY = "ctxgw.acme.01m8sk574twen4hn90tea7zk0n.a" + "b" * 42


def signer() -> Signer:
    keyring, pem = generate_keyring("k1")
    return Signer(keyring, load_private_key(pem))


def test_a_cookie_opens_for_its_session_and_not_after() -> None:
    keys, t0 = signer(), 1_800_000_000.0
    sealed = SessionSealer(keys, clock=lambda: t0).seal(KEY)
    assert KEY not in sealed
    assert SessionSealer(keys, clock=lambda: t0 + SESSION_SECONDS - 1).open(sealed) == KEY
    assert SessionSealer(keys, clock=lambda: t0 + SESSION_SECONDS + 1).open(sealed) is None
    assert SessionSealer(signer(), clock=lambda: t0).open(sealed) is None  # another gateway's
    assert SessionSealer(keys, clock=lambda: t0).open(sealed[:-2] + "xx") is None
    assert SessionSealer(keys).open("not a token at all ☃") is None


def test_csrf_tokens_belong_to_one_session_and_bearers_need_none() -> None:
    sealer = SessionSealer(signer())
    one, two = sealer.seal(KEY), sealer.seal(KEY + "x")
    first = sealer.credentials(None, one)
    second = sealer.credentials(None, two)
    assert first is not None and second is not None and first.by_cookie
    assert first.authorization == f"Bearer {KEY}" and first.csrf != second.csrf
    assert sealer.csrf_ok(first, first.csrf) and not sealer.csrf_ok(first, second.csrf)
    assert not sealer.csrf_ok(first, None)
    bearer = sealer.credentials(f"Bearer {KEY}", one)  # the header wins over a cookie
    assert bearer is not None and not bearer.by_cookie and sealer.csrf_ok(bearer, None)
    assert sealer.credentials(None, None) is None
