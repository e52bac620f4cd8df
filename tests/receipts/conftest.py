"""Shared fixtures: deterministic test keys, a sample receipt body, and a log builder.

The test keys are derived from fixed labels so that signatures (HMAC and Ed25519 are both
deterministic) and therefore the golden vectors are reproducible. They are test keys only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from receipts import (
    GENESIS_PREV,
    RECEIPT_SCHEMA,
    Ed25519Key,
    Envelope,
    HmacKey,
    InclusionProof,
    Keyring,
    Signer,
    bundle_field,
    canonicalize,
    checkpoint_line,
    export_line,
    inclusion_proof,
    leaf_hash,
    log_origin,
    root,
)

VECTORS = Path(__file__).parent / "vectors"


def fixed_secret(label: str) -> bytes:
    return hashlib.sha256(b"ctxgw test key " + label.encode()).digest()


def make_private_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(fixed_secret("ed25519 e1"))


def make_keyring() -> Keyring:
    """k1 active, k0 rotated out (verify_only), Ed25519 e1 active."""
    return Keyring(
        hmac=(
            HmacKey("k1", fixed_secret("hmac k1"), "active"),
            HmacKey("k0", fixed_secret("hmac k0"), "verify_only"),
        ),
        ed25519=(Ed25519Key("e1", make_private_key().public_key(), "active"),),
    )


def sample_body(
    tenant_id: str, seq: int, prev: str, receipt_id: str, bundle: bytes
) -> dict[str, Any]:
    """A context receipt shaped like ARCHITECTURE §8 (scores as decimal strings, no floats)."""
    return {
        "schema": RECEIPT_SCHEMA,
        "receipt_id": receipt_id,
        "kind": "context",
        "tenant_id": tenant_id,
        "log": {"seq": seq, "prev": prev},
        "issued_at": "2026-01-15T09:30:00Z",
        "subject": {"agent_id": "agent-7", "key_id": "key_a1", "purpose": "support"},
        "request": {
            "task": f"Summarise open tickets for Café Zoë ☕ (turn {seq})",
            "namespaces": ["support"],
            "budget_tokens": 800,
            "top_k": 4,
        },
        "policy": {
            "digest": "sha256:" + "ab" * 32,
            "mode": "enforce",
            "decisions": [{"memory_id": "m3", "rule": "deny-pii", "effect": "deny"}],
        },
        "assembler": {
            "version": "0.1.0",
            "tokenizer": "cl100k_base",
            "ranking_profile": "sha256:" + "cd" * 32,
            "embedder": "hash-256",
        },
        "candidates": [
            {"memory_id": "m1", "vector_rank": 1, "vector_distance": "0.1250", "lexical_rank": 2},
            {"memory_id": "m2", "vector_rank": 2, "vector_distance": "0.2500", "lexical_rank": 1},
            {
                "memory_id": "m3",
                "vector_rank": 3,
                "vector_distance": "0.3125",
                "lexical_rank": None,
            },
            {"memory_id": "m4", "vector_rank": None, "vector_distance": None, "lexical_rank": 3},
        ],
        "included": [
            {"memory_id": "m2", "content_sha256": "11" * 32, "tokens": 40},
            {"memory_id": "m1", "content_sha256": "22" * 32, "tokens": 57},
        ],
        "excluded": [
            {"memory_id": "m3", "reason": "policy_denied"},
            {"memory_id": "m4", "reason": "over_budget"},
        ],
        "index": ["m1", "m2", "m4"],
        "budget": {"budget_tokens": 800, "tokens_used": 97},
        "bundle": bundle_field(bundle),
    }


def refusal_body(tenant_id: str, seq: int, prev: str, receipt_id: str) -> dict[str, Any]:
    """A refusal receipt shaped as the gateway writes it: a search an enforced require refused,
    delivering nothing."""
    refused = {"rule_id": "need-purpose", "reason": "Every assembly declares a purpose"}
    return {
        "schema": RECEIPT_SCHEMA,
        "receipt_id": receipt_id,
        "kind": "refusal",
        "tenant_id": tenant_id,
        "log": {"seq": seq, "prev": prev},
        "issued_at": "2026-01-15T09:31:00.000000Z",
        "subject": {"agent_id": "agent-7", "key_id": "key_a1", "role": "agent", "purpose": None},
        "disclosure": "search",
        "request": {
            "query": "open tickets",
            "namespaces": ["support"],
            "memory_types": None,
            "limit": 10,
            "purpose": None,
        },
        "at": "2026-01-15T09:31:00.000000Z",
        "policy": {
            "digest": "sha256:" + "ab" * 32,
            "mode": "enforce",
            "decisions": [
                {
                    "rule_id": "need-purpose",
                    "stage": "request",
                    "effect": "require",
                    "applied": True,
                    "outcome": "refuse",
                    "outcome_if_enforced": "refuse",
                    "evidence": [
                        {
                            "field": "request.purpose",
                            "op": "exists",
                            "expected": None,
                            "actual": None,
                            "result": "false",
                        }
                    ],
                }
            ],
            "outcomes": [],
            "refused": refused,
        },
        "refused": refused,
        "bundle": bundle_field(b""),
        "parent_receipt_id": None,
    }


@dataclass(frozen=True)
class Entry:
    seq: int
    receipt_id: str
    body: bytes
    envelope: Envelope
    leaf: bytes
    bundle: bytes


@dataclass
class LogBuilder:
    """Builds a tenant's receipt log the way the gateway will: chain, sign, hash."""

    signer: Signer
    tenant_id: str = "acme"
    entries: list[Entry] = field(default_factory=list)

    def append(self, body: dict[str, Any] | None = None) -> Entry:
        seq = len(self.entries) + 1
        prev = self.entries[-1].leaf.hex() if self.entries else GENESIS_PREV
        receipt_id = f"rcp-{self.tenant_id}-{seq:04d}"
        bundle = f"# Context for turn {seq}\n- ticket {seq} is open\n".encode()
        if body is None:
            body = sample_body(self.tenant_id, seq, prev, receipt_id, bundle)
        payload = canonicalize(body)
        entry = Entry(
            seq, receipt_id, payload, self.signer.sign(payload, self.tenant_id),
            leaf_hash(payload), bundle,
        )  # fmt: skip
        self.entries.append(entry)
        return entry

    def extend(self, count: int) -> LogBuilder:
        for _ in range(count):
            self.append()
        return self

    @property
    def leaves(self) -> list[bytes]:
        return [entry.leaf for entry in self.entries]

    def checkpoint(self, size: int | None = None) -> str:
        size = len(self.entries) if size is None else size
        return self.signer.sign_checkpoint(
            log_origin(self.tenant_id), size, root(self.leaves[:size])
        )

    def lines(
        self,
        entries: Sequence[Entry] | None = None,
        *,
        checkpoint: str | None = None,
        proof_size: int | None = None,
    ) -> list[str]:
        """Export lines; ``proof_size`` adds inclusion proofs against the tree of that size."""
        out = []
        chosen = self.entries if entries is None else entries
        for entry in chosen:
            proof = None
            if proof_size is not None and entry.seq <= proof_size:
                hashes = inclusion_proof(entry.seq - 1, self.leaves[:proof_size])
                proof = InclusionProof(proof_size, tuple(hashes))
            out.append(export_line(entry.envelope, entry.seq, entry.leaf, proof))
        if checkpoint is not None:
            out.append(checkpoint_line(checkpoint, len(chosen)))
        return out


@pytest.fixture
def private_key() -> Ed25519PrivateKey:
    return make_private_key()


@pytest.fixture
def keyring() -> Keyring:
    return make_keyring()


@pytest.fixture
def signer(keyring: Keyring, private_key: Ed25519PrivateKey) -> Signer:
    return Signer(keyring, private_key)


@pytest.fixture
def new_log(signer: Signer) -> Callable[[str], LogBuilder]:
    """Make an empty log for a tenant."""
    return lambda tenant_id: LogBuilder(signer, tenant_id)


@pytest.fixture
def log(signer: Signer) -> LogBuilder:
    """An empty log of tenant ``acme``."""
    return LogBuilder(signer)


@pytest.fixture
def log5(log: LogBuilder) -> LogBuilder:
    """Tenant ``acme``'s log with five receipts."""
    return log.extend(5)
