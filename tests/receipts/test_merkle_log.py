"""RFC 6962 / RFC 9162 Merkle tree: published vectors, a reference model, property tests.

The golden vectors in vectors/merkle_ct.json are the published Certificate Transparency test
vectors (copied from transparency-dev/merkle, see the file's "source"). They are additionally
cross-checked against `_ref_*` below: a straightforward recursive transcription of RFC 9162
§2.1.1, §2.1.3.1 and §2.1.4.1, independent of the iterative code under test.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receipts import (
    EMPTY_ROOT,
    ConsistencyInvalidError,
    MerkleFrontier,
    MerkleTree,
    ProofInvalidError,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root,
    verify_consistency,
    verify_inclusion,
)
from receipts import merkle as merkle_module
from receipts.merkle import TILE_SIZE, TiledTree, tile_roots, tiled_inclusion_proof
from tests.spying import spy_on

VECTORS = json.loads((Path(__file__).parent / "vectors" / "merkle_ct.json").read_text())
CT_LEAVES = [leaf_hash(bytes.fromhex(x)) for x in VECTORS["leaf_inputs"]]


def _h(hexes: list[str]) -> list[bytes]:
    return [bytes.fromhex(x) for x in hexes]


def _split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _ref_root(leaves: list[bytes]) -> bytes:
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return hashlib.sha256(b"\x01" + _ref_root(leaves[:k]) + _ref_root(leaves[k:])).digest()


def _ref_path(m: int, leaves: list[bytes]) -> list[bytes]:
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if m < k:
        return [*_ref_path(m, leaves[:k]), _ref_root(leaves[k:])]
    return [*_ref_path(m - k, leaves[k:]), _ref_root(leaves[:k])]


def _ref_subproof(m: int, leaves: list[bytes], complete: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if complete else [_ref_root(leaves)]
    k = _split(n)
    if m <= k:
        return [*_ref_subproof(m, leaves[:k], complete), _ref_root(leaves[k:])]
    return [*_ref_subproof(m - k, leaves[k:], False), _ref_root(leaves[:k])]


def _leaves(n: int) -> list[bytes]:
    return [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]


def test_empty_tree_root() -> None:
    assert root([]) == EMPTY_ROOT
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_hasher_vectors() -> None:
    # transparency-dev rfc6962_test.go TestRFC6962Hasher.
    assert node_hash(b"N123", b"N456").hex() == (
        "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"
    )


@pytest.mark.parametrize("size", range(9))
def test_published_roots(size: int) -> None:
    expected = bytes.fromhex(VECTORS["roots"][size])
    assert root(CT_LEAVES[:size]) == expected
    assert _ref_root(CT_LEAVES[:size]) == expected
    assert MerkleFrontier.from_leaves(CT_LEAVES[:size]).root() == expected
    assert MerkleTree(CT_LEAVES[:size]).root() == expected


@pytest.mark.parametrize("case", VECTORS["inclusion_proofs"], ids=str)
def test_published_inclusion_proofs(case: dict[str, object]) -> None:
    index, size, proof = case["index"], case["size"], _h(case["proof"])  # type: ignore[arg-type]
    assert isinstance(index, int)
    assert isinstance(size, int)
    leaves = CT_LEAVES[:size]
    assert inclusion_proof(index, leaves) == proof
    assert MerkleTree(leaves).inclusion_proof(index) == proof
    assert _ref_path(index, leaves) == proof
    verify_inclusion(leaves[index], index, size, proof, bytes.fromhex(VECTORS["roots"][size]))


@pytest.mark.parametrize("case", VECTORS["consistency_proofs"], ids=str)
def test_published_consistency_proofs(case: dict[str, object]) -> None:
    old, new, proof = case["old_size"], case["new_size"], _h(case["proof"])  # type: ignore[arg-type]
    assert isinstance(old, int)
    assert isinstance(new, int)
    assert consistency_proof(old, CT_LEAVES[:new]) == proof
    roots = _h(VECTORS["roots"])
    verify_consistency(old, new, roots[old], roots[new], proof)


def test_all_small_trees_against_the_reference() -> None:
    for n in range(1, 40):
        leaves = _leaves(n)
        tree = MerkleTree(leaves)
        assert root(leaves) == _ref_root(leaves) == tree.root()
        for m in range(n):
            assert inclusion_proof(m, leaves) == _ref_path(m, leaves) == tree.inclusion_proof(m)
        for m in range(1, n):
            assert consistency_proof(m, leaves) == _ref_subproof(m, leaves, True)


def _corruptions(proof: list[bytes], other: bytes) -> list[list[bytes]]:
    """Wrong proofs in the style of transparency-dev corruptInclusionProof."""
    out = [[*proof, other], [other, *proof], [*proof, b""]]
    if proof:
        out.append(proof[:-1])
    for i in range(len(proof)):
        flipped = list(proof)
        flipped[i] = bytes([proof[i][0] ^ 8]) + proof[i][1:]
        out.append(flipped)
    if len(proof) > 1:
        out.append([proof[0], other, *proof[1:]])
    return out


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_inclusion_property(data: st.DataObject) -> None:
    size = data.draw(st.integers(1, 1500), label="size")
    index = data.draw(st.integers(0, size - 1), label="index")
    leaves = _leaves(size)
    tree_root = root(leaves)
    proof = inclusion_proof(index, leaves)
    verify_inclusion(leaves[index], index, size, proof, tree_root)
    other = hashlib.sha256(b"other").digest()
    for wrong in _corruptions(proof, other):
        with pytest.raises(ProofInvalidError):
            verify_inclusion(leaves[index], index, size, wrong, tree_root)
    # (Not size + 1: a tree one larger can share the path shape; the checkpoint signs the size.)
    for wrong_index, wrong_size in ((index ^ 1, size), (index, size * 2)):
        if wrong_index < wrong_size and (wrong_index, wrong_size) != (index, size):
            with pytest.raises(ProofInvalidError):
                verify_inclusion(leaves[index], wrong_index, wrong_size, proof, tree_root)
    with pytest.raises(ProofInvalidError):
        verify_inclusion(other, index, size, proof, tree_root)
    with pytest.raises(ProofInvalidError):
        verify_inclusion(leaves[index], size, size, proof, tree_root)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_consistency_property(data: st.DataObject) -> None:
    new = data.draw(st.integers(1, 1500), label="new")
    old = data.draw(st.integers(0, new), label="old")
    leaves = _leaves(new)
    old_root, new_root = root(leaves[:old]), root(leaves)
    proof = consistency_proof(old, leaves)
    verify_consistency(old, new, old_root, new_root, proof)
    other = hashlib.sha256(b"other").digest()
    for wrong in _corruptions(proof, other):
        with pytest.raises(ConsistencyInvalidError):
            verify_consistency(old, new, old_root, new_root, wrong)
    with pytest.raises(ConsistencyInvalidError):
        verify_consistency(old, new, other, new_root, proof)
    if 0 < old < new:  # (every tree extends the empty one, whatever its root)
        with pytest.raises(ConsistencyInvalidError):
            verify_consistency(old, new, old_root, other, proof)
        # An old checkpoint presented as newest: the sizes are the wrong way round.
        with pytest.raises(ConsistencyInvalidError):
            verify_consistency(new, old, new_root, old_root, proof)
    if 0 < old < new - 1:
        with pytest.raises(ConsistencyInvalidError):
            verify_consistency(old, new - 1, old_root, root(leaves[:-1]), proof)


def test_frontier_tracks_the_root() -> None:
    frontier = MerkleFrontier()
    leaves = _leaves(300)
    assert frontier.root() == EMPTY_ROOT
    for i, leaf in enumerate(leaves, start=1):
        frontier.append(leaf)
        assert frontier.size == i
        assert frontier.root() == root(leaves[:i])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5000), st.data())
def test_a_hashed_tree_gives_the_proofs_the_leaves_give(size: int, data: st.DataObject) -> None:
    """MerkleTree (every perfect subtree hashed once, for many proofs) agrees with the per-call
    producers on the root and on inclusion proofs, at sizes beyond the small-tree sweep."""
    leaves = _leaves(size)
    tree = MerkleTree(leaves)
    assert tree.size == size and tree.root() == root(leaves)
    for index in data.draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=5)):
        assert tree.inclusion_proof(index) == inclusion_proof(index, leaves)
    with pytest.raises(ValueError, match="outside"):
        tree.inclusion_proof(size)


def _tiled(index: int, leaves: list[bytes]) -> tuple[list[bytes], set[int]]:
    """The tiled proof of `index`, and the tiles whose leaves it read."""
    read: set[int] = set()

    def leaves_of(lo: int, hi: int) -> list[bytes]:
        assert 0 < hi - lo <= TILE_SIZE and lo // TILE_SIZE == (hi - 1) // TILE_SIZE
        read.add(lo // TILE_SIZE)
        return leaves[lo:hi]

    return tiled_inclusion_proof(index, len(leaves), tile_roots(leaves), leaves_of), read


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 6 * TILE_SIZE + 37), st.data())
def test_a_tiled_proof_is_the_proof_the_leaves_give(size: int, data: st.DataObject) -> None:
    """From the tile roots and two tiles of leaves (the one holding the leaf and the
    incomplete last one), the same proof as from the whole log, at every kind of size."""
    leaves = _leaves(size)
    indexes = st.integers(0, size - 1) | st.sampled_from(
        [i for i in (0, size - 1, TILE_SIZE - 1, TILE_SIZE, size // 2) if i < size]
    )
    tree_root = root(leaves)
    for index in data.draw(st.lists(indexes, min_size=1, max_size=6)):
        proof, read = _tiled(index, leaves)
        assert proof == inclusion_proof(index, leaves)
        verify_inclusion(leaves[index], index, size, proof, tree_root)
        assert read <= {index // TILE_SIZE, (size - 1) // TILE_SIZE}


@pytest.mark.parametrize("size", [TILE_SIZE - 1, TILE_SIZE, TILE_SIZE + 1, 4 * TILE_SIZE])
def test_tiled_proofs_at_tile_edges(size: int) -> None:
    leaves = _leaves(size)
    for index in range(size):
        assert _tiled(index, leaves)[0] == inclusion_proof(index, leaves)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5 * TILE_SIZE + 99), st.data())
def test_a_tiled_tree_reads_each_tile_once_for_many_proofs(size: int, data: st.DataObject) -> None:
    """What a filtered export does: many proofs, one tree above the tiles, each tile of leaves
    read once and only if a proof needs it."""
    leaves = _leaves(size)
    reads: list[int] = []

    def leaves_of(lo: int, hi: int) -> list[bytes]:
        assert lo % TILE_SIZE == 0 and hi == min(lo + TILE_SIZE, size)
        reads.append(lo // TILE_SIZE)
        return leaves[lo:hi]

    tree = TiledTree(size, tile_roots(leaves), leaves_of)
    assert tree.size == size and tree.root() == root(leaves)
    indexes = data.draw(st.lists(st.integers(0, size - 1), max_size=12))
    for index in indexes:
        assert tree.inclusion_proof(index) == inclusion_proof(index, leaves)
    assert len(reads) == len(set(reads))
    assert set(reads) <= {i // TILE_SIZE for i in indexes} | {(size - 1) // TILE_SIZE}


def test_tile_roots_and_their_preconditions() -> None:
    leaves = _leaves(3 * TILE_SIZE + 5)
    roots = tile_roots(leaves)
    assert roots == [root(leaves[j * TILE_SIZE : (j + 1) * TILE_SIZE]) for j in range(3)]
    assert tile_roots(leaves[TILE_SIZE:], first=TILE_SIZE) == roots[1:]
    with pytest.raises(ValueError, match="multiples"):
        tile_roots(leaves, first=1)
    with pytest.raises(ValueError, match="needs 3 tiles"):
        tiled_inclusion_proof(0, len(leaves), roots[:2], lambda lo, hi: leaves[lo:hi])


def test_a_tiled_proof_hashes_tiles_not_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over 64 tiles, a proof hashes about as many nodes as there are tiles, not leaves."""
    leaves = _leaves(64 * TILE_SIZE + 3)
    roots = tile_roots(leaves)
    for index in (0, len(leaves) // 2, len(leaves) - 1):
        calls = _count_node_hashes(
            monkeypatch,
            functools.partial(
                tiled_inclusion_proof, index, len(leaves), roots, lambda lo, hi: leaves[lo:hi]
            ),
        )
        assert 0 < calls < 64 + 2 * TILE_SIZE


def test_a_frontier_resumes_from_its_edge() -> None:
    """What a checkpoint stores (size and edge) is all it takes to go on appending."""
    leaves = _leaves(300)
    for size in range(0, 300, 7):
        stored = MerkleFrontier.from_leaves(leaves[:size])
        assert len(stored.edge) == 32 * bin(size).count("1")
        resumed = MerkleFrontier.resume(size, stored.edge)
        assert resumed.size == size and resumed.root() == root(leaves[:size])
        for leaf in leaves[size:]:
            resumed.append(leaf)
        assert resumed.root() == root(leaves)
    with pytest.raises(ValueError, match="does not fit"):
        MerkleFrontier.resume(5, b"\x00" * 32)


def test_producers_reject_out_of_range_arguments() -> None:
    with pytest.raises(ValueError, match="outside"):
        inclusion_proof(3, _leaves(3))
    with pytest.raises(ValueError, match="outside"):
        consistency_proof(4, _leaves(3))


def _count_node_hashes(monkeypatch: pytest.MonkeyPatch, call: Callable[[], object]) -> int:
    """The interior-node hashes `call` computes. (An upper bound holds for nothing when the spy
    sees nothing: callers also check that what they count is there.)"""
    calls = 0
    real = merkle_module.node_hash

    def counting(left: bytes, right: bytes) -> bytes:
        nonlocal calls
        calls += 1
        return real(left, right)

    with monkeypatch.context() as patch:
        spy_on(patch, merkle_module, "node_hash", counting, packages=("receipts",))
        call()
    return calls


@pytest.mark.parametrize("n", [1000, 1024, 4097])
def test_work_is_linear(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """A server proves over ~1e6 leaves: root and proofs must be O(n), never quadratic."""
    leaves = _leaves(n)
    assert _count_node_hashes(monkeypatch, lambda: root(leaves)) == n - 1
    for index in (0, n // 3, n - 1):
        prove = functools.partial(inclusion_proof, index, leaves)
        # The first leaf's proof holds the roots of subtrees to its right: they take hashing.
        assert index > 0 or _count_node_hashes(monkeypatch, prove) > 0
        assert _count_node_hashes(monkeypatch, prove) < n
    for old in (1, n // 2, n - 1):
        prove = functools.partial(consistency_proof, old, leaves)
        assert old > 1 or _count_node_hashes(monkeypatch, prove) > 0
        assert _count_node_hashes(monkeypatch, prove) < n


def test_large_tree_smoke() -> None:
    leaves = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(200_003)]
    tree_root = root(leaves)
    verify_inclusion(
        leaves[123_457], 123_457, len(leaves), inclusion_proof(123_457, leaves), tree_root
    )
    proof = consistency_proof(131_073, leaves)
    verify_consistency(131_073, len(leaves), root(leaves[:131_073]), tree_root, proof)
