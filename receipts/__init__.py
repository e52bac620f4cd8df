"""Signed, chained, Merkle-logged receipts for every disclosure; verifiable offline.

Pure: depends only on the standard library, ``cryptography``, ``rfc8785`` and ``msgspec``; reads
no clock and draws randomness only in the key-generation functions. Modules, one concept each:

- `receipts.canonical`  RFC 8785 canonical bytes (no floats, ASCII keys), strict decoding
- `receipts.body`       the receipt header fields: schema, tenant, log {seq, prev}, bundle;
                        what a refusal must say
- `receipts.dsse`       DSSE v1 envelope and PAE
- `receipts.keyring`    keyring file, per-tenant HKDF subkeys, Ed25519 keys, rotation
- `receipts.keyfiles`   owner-only key files, Ed25519 private key PEM, the public keyring
- `receipts.signing`    `Signer` and `verify_envelope`
- `receipts.merkle`     RFC 6962/9162 Merkle tree, inclusion and consistency proofs
- `receipts.proof_verification`
                        checking those proofs (RFC 9162 §2.1.3.2, §2.1.4.2)
- `receipts.checkpoint` checkpoints as Ed25519 signed notes
- `receipts.export`     the JSONL export line format
- `receipts.verify`     verification of receipts and exports
- `receipts.errors`     the error tree and its stable codes

Not done here, deliberately: storage, clocks, ids, HTTP. The gateway owns those.
"""

from receipts.body import (
    EMPTY_BUNDLE_SHA256,
    GENESIS_PREV,
    RECEIPT_SCHEMA,
    REFUSAL_KIND,
    ReceiptHeader,
    bundle_field,
    check_bundle,
    read_header,
)
from receipts.canonical import canonicalize, decode_body
from receipts.checkpoint import (
    Checkpoint,
    log_origin,
    parse_checkpoint,
    sign_checkpoint,
    verify_checkpoint,
    verify_checkpoint_consistency,
)
from receipts.dsse import PAYLOAD_TYPE, Envelope, Signature, pae
from receipts.errors import (
    ERROR_CODES,
    BundleMismatchError,
    CanonicalizationError,
    ChainBreakError,
    CheckpointInvalidError,
    ConsistencyInvalidError,
    IncompleteError,
    IndexMismatchError,
    KeyringError,
    MalformedError,
    NotCanonicalError,
    NotFoundError,
    ProofInvalidError,
    ReceiptError,
    SeqGapError,
    SignatureMismatchError,
    SignatureMissingError,
    TenantMismatchError,
    UnknownKeyError,
    VerificationError,
)
from receipts.export import (
    ExportedCheckpoint,
    ExportedReceipt,
    InclusionProof,
    checkpoint_line,
    export_line,
    parse_line,
)
from receipts.keyfiles import (
    load_private_key,
    private_key_pem,
    public_keyring,
    write_private_file,
    write_public_file,
)
from receipts.keyring import (
    Ed25519Key,
    HmacKey,
    Keyring,
    generate_keyring,
    rotate,
    rotate_ed25519,
    tenant_subkey,
)
from receipts.merkle import (
    EMPTY_ROOT,
    MerkleFrontier,
    MerkleTree,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root,
)
from receipts.proof_verification import verify_consistency, verify_inclusion
from receipts.signing import Signer, verify_envelope
from receipts.verify import ReceiptCheck, VerifyReport, verify_export, verify_receipt

__all__ = [
    "EMPTY_BUNDLE_SHA256",
    "EMPTY_ROOT",
    "ERROR_CODES",
    "GENESIS_PREV",
    "PAYLOAD_TYPE",
    "RECEIPT_SCHEMA",
    "REFUSAL_KIND",
    "BundleMismatchError",
    "CanonicalizationError",
    "ChainBreakError",
    "Checkpoint",
    "CheckpointInvalidError",
    "ConsistencyInvalidError",
    "Ed25519Key",
    "Envelope",
    "ExportedCheckpoint",
    "ExportedReceipt",
    "HmacKey",
    "InclusionProof",
    "IncompleteError",
    "IndexMismatchError",
    "Keyring",
    "KeyringError",
    "MalformedError",
    "MerkleFrontier",
    "MerkleTree",
    "NotCanonicalError",
    "NotFoundError",
    "ProofInvalidError",
    "ReceiptCheck",
    "ReceiptError",
    "ReceiptHeader",
    "SeqGapError",
    "Signature",
    "SignatureMismatchError",
    "SignatureMissingError",
    "Signer",
    "TenantMismatchError",
    "UnknownKeyError",
    "VerificationError",
    "VerifyReport",
    "bundle_field",
    "canonicalize",
    "check_bundle",
    "checkpoint_line",
    "consistency_proof",
    "decode_body",
    "export_line",
    "generate_keyring",
    "inclusion_proof",
    "leaf_hash",
    "load_private_key",
    "log_origin",
    "node_hash",
    "pae",
    "parse_checkpoint",
    "parse_line",
    "private_key_pem",
    "public_keyring",
    "read_header",
    "root",
    "rotate",
    "rotate_ed25519",
    "sign_checkpoint",
    "tenant_subkey",
    "verify_checkpoint",
    "verify_checkpoint_consistency",
    "verify_consistency",
    "verify_envelope",
    "verify_export",
    "verify_inclusion",
    "verify_receipt",
    "write_private_file",
    "write_public_file",
]
