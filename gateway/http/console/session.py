"""The console's browser session: the API key, given once at sign-in, sealed into a short-lived
cookie, and the CSRF token of the forms that write (replays, as-of bundles, sign-out).

The cookie is a Fernet token (AES-128-CBC + HMAC-SHA256, with its issue time) of the key under a
secret derived from the receipt keyring's active HMAC secret (HKDF, RFC 5869), so every worker
and replica of one gateway reads the cookies of the others and nothing new has to be configured;
rotating the keyring signs everyone out. The key inside it is authenticated again on every
request (`gateway.usecases.access.work`), so a revoked key stops working at once, cookie or not.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from receipts import Signer

__all__ = ["COOKIE", "SESSION_SECONDS", "Credentials", "SessionSealer"]

COOKIE = "ctxgw_console"
SESSION_SECONDS = 15 * 60  # short-lived: a forgotten browser tab signs out by itself
_INFO = b"ctxgw console session v1"


@dataclass(frozen=True, slots=True)
class Credentials:
    """How a console request is authenticated: the `Authorization` header the use cases take,
    and the CSRF token its forms carry (required back only when the cookie authenticated, the
    one credential a browser sends by itself)."""

    authorization: str
    by_cookie: bool
    csrf: str


class SessionSealer:
    def __init__(self, signer: Signer, clock: Callable[[], float] = time.time) -> None:
        active = signer.keyring.active_hmac()
        assert active is not None  # a Signer exists only with an active HMAC key
        secret = HKDF(algorithm=hashes.SHA256(), length=64, salt=None, info=_INFO).derive(
            active.secret
        )
        self._fernet = Fernet(base64.urlsafe_b64encode(secret[:32]))
        self._csrf_key = secret[32:]
        self._clock = clock

    def seal(self, key: str) -> str:
        sealed = self._fernet.encrypt_at_time(key.encode("ascii"), int(self._clock()))
        return sealed.decode("ascii")

    def open(self, cookie: str) -> str | None:
        """The key sealed in a cookie of ours younger than the session; None otherwise."""
        try:
            opened = self._fernet.decrypt_at_time(
                cookie.encode("ascii"), SESSION_SECONDS, int(self._clock())
            )
            return opened.decode("ascii")
        except (InvalidToken, UnicodeError):
            return None

    def csrf_token(self, credential: str) -> str:
        """Bound to the credential (the cookie or the bearer header): a token seen in one
        session is worth nothing in another."""
        digest = hashlib.sha256(credential.encode("utf-8")).digest()
        return hmac.new(self._csrf_key, b"csrf:" + digest, hashlib.sha256).hexdigest()

    def credentials(self, authorization: str | None, cookie: str | None) -> Credentials | None:
        """A bearer header wins over the cookie (scripts send no cookie; a browser cannot be
        made to send a header cross-site); None when neither is there or the cookie is stale."""
        if authorization:
            return Credentials(authorization, False, self.csrf_token(authorization))
        key = self.open(cookie) if cookie else None
        if key is None or cookie is None:
            return None
        return Credentials(f"Bearer {key}", True, self.csrf_token(cookie))

    def csrf_ok(self, credentials: Credentials, token: str | None) -> bool:
        if not credentials.by_cookie:
            return True
        return token is not None and hmac.compare_digest(credentials.csrf, token)
