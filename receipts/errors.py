"""Everything the receipts package raises on purpose.

    ReceiptError                     base: catch this to catch everything below
    ├── CanonicalizationError        a value cannot become a receipt body (producer bug)
    ├── KeyringError                 a keyring or key file is unusable (operator error)
    └── VerificationError            evidence failed a check; ``.code`` is stable
        ├── MalformedError             malformed            not the shape the format requires
        ├── NotCanonicalError          not_canonical        body bytes are not RFC 8785 form
        ├── SignatureMismatchError     signature_mismatch   a signature does not verify
        ├── SignatureMissingError      signature_missing    a required signature is absent: the
        │                                                   Ed25519 one always, the HMAC one when
        │                                                   the keyring holds HMAC secrets
        ├── UnknownKeyError            unknown_key          no key in the keyring for a signer
        ├── TenantMismatchError        tenant_mismatch      evidence of another tenant
        ├── SeqGapError                seq_gap              log sequence numbers skip or repeat
        ├── ChainBreakError            chain_break          ``prev`` is not the previous leaf
        ├── ProofInvalidError          proof_invalid        log does not match its checkpoint
        ├── ConsistencyInvalidError    consistency_invalid  checkpoints do not extend each other
        ├── CheckpointInvalidError     checkpoint_invalid   checkpoint text or signature is bad
        ├── BundleMismatchError        bundle_mismatch      delivered bundle differs from receipt
        ├── NotFoundError              not_found            the asked-for receipt is absent
        ├── IncompleteError            incomplete           no end line (empty or cut off), or
        │                                                   its count is not the lines'
        └── IndexMismatchError         index_mismatch       a stored column beside the body
                                                            (agent, disclosed ids) disagrees

Verification functions return ``None`` on success and raise a ``VerificationError`` on failure;
there is no boolean to forget to check. The codes are part of the public contract (the CLI prints
them, the gateway returns them): never rename one, only add.
"""

from __future__ import annotations

from typing import ClassVar, Final

__all__ = [
    "ERROR_CODES",
    "BundleMismatchError",
    "CanonicalizationError",
    "ChainBreakError",
    "CheckpointInvalidError",
    "ConsistencyInvalidError",
    "IncompleteError",
    "IndexMismatchError",
    "KeyringError",
    "MalformedError",
    "NotCanonicalError",
    "NotFoundError",
    "ProofInvalidError",
    "ReceiptError",
    "SeqGapError",
    "SignatureMismatchError",
    "SignatureMissingError",
    "TenantMismatchError",
    "UnknownKeyError",
    "VerificationError",
]


class ReceiptError(Exception):
    """Base of every error this package raises deliberately."""


class CanonicalizationError(ReceiptError, ValueError):
    """A value cannot be encoded as a receipt body.

    ``path`` locates the offending value in JSON-pointer-like form (``$.candidates[3].score``);
    ``value`` is the value itself. See RFC 8785 §3.2 and this package's profile: integers only,
    ASCII object keys.
    """

    def __init__(self, message: str, *, path: str, value: object) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.value = value


class KeyringError(ReceiptError, ValueError):
    """A keyring, key file or signing configuration is unusable."""


class VerificationError(ReceiptError):
    """Evidence failed verification. ``code`` is a stable identifier; ``context`` says where.

    Context keys are free-form but conventional: ``seq``, ``receipt_id``, ``keyid``, ``line``.
    """

    code: ClassVar[str] = "verification_failed"

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context: dict[str, object] = context

    def __str__(self) -> str:
        where = ", ".join(f"{key}={value}" for key, value in self.context.items())
        return f"{self.code}: {self.message}" + (f" ({where})" if where else "")


class MalformedError(VerificationError):
    code = "malformed"


class NotCanonicalError(VerificationError):
    code = "not_canonical"


class SignatureMismatchError(VerificationError):
    code = "signature_mismatch"


class SignatureMissingError(VerificationError):
    """The envelope lacks a signature the keyring requires; ``context["algorithm"]`` names it
    (``ed25519`` or ``hmac-sha256``). No flag waives it."""

    code = "signature_missing"


class UnknownKeyError(VerificationError):
    code = "unknown_key"


class TenantMismatchError(VerificationError):
    code = "tenant_mismatch"


class SeqGapError(VerificationError):
    code = "seq_gap"


class ChainBreakError(VerificationError):
    code = "chain_break"


class ProofInvalidError(VerificationError):
    code = "proof_invalid"


class ConsistencyInvalidError(VerificationError):
    code = "consistency_invalid"


class CheckpointInvalidError(VerificationError):
    code = "checkpoint_invalid"


class BundleMismatchError(VerificationError):
    code = "bundle_mismatch"


class NotFoundError(VerificationError):
    code = "not_found"


class IncompleteError(VerificationError):
    code = "incomplete"


class IndexMismatchError(VerificationError):
    code = "index_mismatch"


ERROR_CODES: Final[tuple[str, ...]] = tuple(
    cls.code
    for cls in (
        MalformedError,
        NotCanonicalError,
        SignatureMismatchError,
        UnknownKeyError,
        TenantMismatchError,
        SeqGapError,
        ChainBreakError,
        ProofInvalidError,
        ConsistencyInvalidError,
        CheckpointInvalidError,
        BundleMismatchError,
        NotFoundError,
        IncompleteError,
        IndexMismatchError,
        SignatureMissingError,
    )
)
