"""Verifying RFC 9162 Merkle proofs: inclusion (§2.1.3.2) and consistency (§2.1.4.2).

Each verifier returns ``None`` or raises `ProofInvalidError` / `ConsistencyInvalidError`; the
proofs and the hashes they combine are `receipts.merkle`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from receipts.errors import ConsistencyInvalidError, ProofInvalidError
from receipts.merkle import EMPTY_ROOT, HASH_SIZE, node_hash

__all__ = ["verify_consistency", "verify_inclusion"]


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root_hash: bytes
) -> None:
    """Check that ``leaf`` sits at ``index`` in the tree of ``size`` with ``root_hash``.

    RFC 9162 §2.1.3.2. Raises `ProofInvalidError`.
    """
    if not 0 <= index < size:
        raise ProofInvalidError(f"leaf index {index} outside a tree of size {size}")
    _check_hashes(proof, ProofInvalidError)
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ProofInvalidError("inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofInvalidError("inclusion proof is shorter than the tree is deep")
    if r != root_hash:
        raise ProofInvalidError("inclusion proof does not lead to the root", index=index)


def verify_consistency(  # noqa: C901  RFC 9162 section 2.1.4.2, step by step as the RFC writes it
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Check that the tree (``new_size``, ``new_root``) extends (``old_size``, ``old_root``).

    RFC 9162 §2.1.4.2, plus the trivial cases: an empty old tree (any tree extends it) and equal
    sizes (the roots must be equal), both with an empty proof. Raises `ConsistencyInvalidError`.
    """
    if not 0 <= old_size <= new_size:
        raise ConsistencyInvalidError(
            f"a tree of size {new_size} cannot extend one of size {old_size}"
        )
    _check_hashes(proof, ConsistencyInvalidError)
    if old_size in (0, new_size):
        if proof:
            raise ConsistencyInvalidError("proof must be empty for these sizes")
        if old_size == 0 and old_root != EMPTY_ROOT:
            raise ConsistencyInvalidError("old root is not the empty-tree root")
        if old_size == new_size and old_root != new_root:
            raise ConsistencyInvalidError("trees of equal size have different roots")
        return
    if not proof:
        raise ConsistencyInvalidError("consistency proof is empty")
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # old tree is perfect: its root is the first node
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ConsistencyInvalidError("consistency proof is too long")
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ConsistencyInvalidError("consistency proof is too short")
    if fr != old_root:
        raise ConsistencyInvalidError("proof does not reproduce the old root")
    if sr != new_root:
        raise ConsistencyInvalidError("proof does not reproduce the new root")


def _check_hashes(
    proof: Sequence[bytes], error: type[ProofInvalidError | ConsistencyInvalidError]
) -> None:
    for node in proof:
        if len(node) != HASH_SIZE:
            raise error(f"proof node of {len(node)} bytes, expected {HASH_SIZE}")
