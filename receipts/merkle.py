"""The per-tenant receipt log as an RFC 6962 / RFC 9162 §2.1 Merkle tree.

Leaves are the leaf hashes SHA-256(0x00 ‖ body) and interior nodes SHA-256(0x01 ‖ left ‖ right);
the domain-separation prefixes stop a leaf from being passed off as a node (RFC 9162 §2.1.1).
The tree over n leaves splits at k, the largest power of two below n, so the left subtree is
always perfect.

Producers: `root`, `inclusion_proof` and `consistency_proof` take the full list of leaf hashes.
Each runs in O(n) hash operations (the subtrees a proof names are disjoint) and O(log n) stack.
`MerkleTree` hashes every perfect subtree once (n - 1 hashes, n more hashes of memory), then
gives any number of proofs in O(log² n) lookups each: a filtered export of k receipts from a log
of n costs O(n + k log² n) instead of O(k·n). `MerkleFrontier` keeps only the right edge of the
tree (at most log2 n hashes), so a server can append leaves and produce the current root in
O(log n) without reloading the log.

The verifiers of these proofs are `receipts.proof_verification`'s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from functools import partial
from typing import Final

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "TILE_SIZE",
    "MerkleFrontier",
    "MerkleTree",
    "TiledTree",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root",
    "tile_roots",
    "tiled_inclusion_proof",
]

HASH_SIZE: Final = 32
# A tile: the root of 2**TILE_HEIGHT consecutive leaves, aligned (tiled_inclusion_proof).
TILE_HEIGHT: Final = 8
TILE_SIZE: Final = 1 << TILE_HEIGHT
# RFC 9162 §2.1.1: the hash of an empty tree is the hash of the empty string.
EMPTY_ROOT: Final = hashlib.sha256(b"").digest()
_LEAF_PREFIX: Final = b"\x00"
_NODE_PREFIX: Final = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    """SHA-256(0x00 ‖ data): the leaf hash of a receipt body (RFC 9162 §2.1.1)."""
    return hashlib.sha256(_LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 ‖ left ‖ right): an interior node (RFC 9162 §2.1.1)."""
    return hashlib.sha256(_NODE_PREFIX + left + right).digest()


def root(leaves: Sequence[bytes]) -> bytes:
    """The Merkle tree hash MTH of ``leaves`` (leaf hashes, in log order)."""
    return _subtree(leaves, 0, len(leaves))


def inclusion_proof(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PATH(index, D[n]) of RFC 9162 §2.1.3.1, deepest sibling first."""
    return _path(index, len(leaves), partial(_subtree, leaves))


def _path(index: int, size: int, subtree: Callable[[int, int], bytes]) -> list[bytes]:
    """PATH(index, D[size]), with ``subtree(lo, hi)`` giving MTH(D[lo:hi])."""
    if not 0 <= index < size:
        raise ValueError(f"leaf index {index} outside a tree of size {size}")
    path: list[bytes] = []
    lo, hi = 0, size
    # Walk down from the root, remembering each sibling subtree; the proof lists them bottom-up.
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            path.append(subtree(lo + k, hi))
            hi = lo + k
        else:
            path.append(subtree(lo, lo + k))
            lo = lo + k
    path.reverse()
    return path


def consistency_proof(old_size: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PROOF(m, D[n]) of RFC 9162 §2.1.4.1 for m = ``old_size`` and n = ``len(leaves)``.

    Empty when ``old_size`` is 0 or n: every tree extends the empty tree and itself.
    """
    size = len(leaves)
    if not 0 <= old_size <= size:
        raise ValueError(f"old size {old_size} outside 0..{size}")
    if old_size in (0, size):
        return []
    proof: list[bytes] = []
    lo, hi, m, complete = 0, size, old_size, True
    # SUBPROOF(m, D[lo:hi], complete), unrolled: each step appends one sibling subtree hash.
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            proof.append(_subtree(leaves, lo + k, hi))
            hi = lo + k
        else:
            proof.append(_subtree(leaves, lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    if not complete:
        proof.append(_subtree(leaves, lo, hi))
    proof.reverse()
    return proof


class MerkleTree:
    """A fixed tree over ``leaves`` that answers many proofs: each perfect, aligned subtree
    (2**h leaves starting at a multiple of 2**h) is hashed once, up front.

    Every subtree RFC 9162 names in a proof is D[lo:hi] with ``lo`` a multiple of the largest
    power of two that fits: it is perfect, or it runs to the tree's right edge, where it is the
    fold of at most log2 n perfect ones (as `_fold` combines a stack). So a proof is the same
    list of hashes `inclusion_proof` and `consistency_proof` give, from lookups.
    """

    __slots__ = ("_levels", "_size")

    def __init__(self, leaves: Sequence[bytes]) -> None:
        self._size = len(leaves)
        # _levels[h][j] = MTH(D[j * 2**h : (j + 1) * 2**h]), for the complete blocks only.
        levels = [list(leaves)]
        while len(levels[-1]) > 1:
            below = levels[-1]
            levels.append([node_hash(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)])
        self._levels = levels

    @property
    def size(self) -> int:
        return self._size

    def root(self) -> bytes:
        return self._range(0, self._size)

    def inclusion_proof(self, index: int) -> list[bytes]:
        """PATH(index, D[n]), as `inclusion_proof` gives it."""
        return _path(index, self._size, self._range)

    def _range(self, lo: int, hi: int) -> bytes:
        """MTH(D[lo:hi]) for a subtree a proof can name (the class docstring says which)."""
        return _blocks(lo, hi, lambda height, position: self._levels[height][position >> height])


def _blocks(lo: int, hi: int, block: Callable[[int, int], bytes]) -> bytes:
    """MTH(D[lo:hi]) for a subtree a proof can name (MerkleTree's docstring says which), from
    ``block(height, position)``: the hash of the perfect block of 2**height leaves there."""
    if lo == hi:
        return EMPTY_ROOT
    # Perfect blocks from lo, largest first, as a binary counter of the leaves from lo.
    stack: list[tuple[int, bytes]] = []
    position = lo
    while position < hi:
        height = (hi - position).bit_length() - 1
        if position % (1 << height):  # not a subtree any proof names
            raise ValueError(f"D[{lo}:{hi}] is not a subtree of the tree")
        stack.append((height, block(height, position)))
        position += 1 << height
    return _fold(stack)


def tile_roots(leaves: Sequence[bytes], first: int = 0) -> list[bytes]:
    """The roots of the complete tiles among ``leaves``, which start at leaf ``first`` (a
    multiple of TILE_SIZE): tile j covers D[j * TILE_SIZE : (j + 1) * TILE_SIZE]."""
    if first % TILE_SIZE:
        raise ValueError(f"tiles start at multiples of {TILE_SIZE}, not at leaf {first}")
    whole = len(leaves) - len(leaves) % TILE_SIZE
    return [root(leaves[lo : lo + TILE_SIZE]) for lo in range(0, whole, TILE_SIZE)]


def tiled_inclusion_proof(
    index: int,
    size: int,
    tiles: Sequence[bytes],
    leaves_of: Callable[[int, int], Sequence[bytes]],
) -> list[bytes]:
    """PATH(index, D[size]), as `inclusion_proof` gives it, without the whole log: from the
    roots of its complete tiles and two tiles of leaves (`TiledTree` says how)."""
    return TiledTree(size, tiles, leaves_of).inclusion_proof(index)


class TiledTree:
    """A tree of ``size`` leaves known by the roots of its complete tiles (``tiles[j]``, as
    `tile_roots` gives them; at least ``size // TILE_SIZE``) and, on demand, the leaves of the
    tiles its proofs need: ``leaves_of(lo, hi)`` gives D[lo:hi] for one whole tile (the last
    one may be incomplete).

    Every subtree a proof names is a fold of perfect aligned blocks (MerkleTree's docstring);
    one of TILE_SIZE leaves or more is a perfect tree over whole tiles, hashed once here into a
    `MerkleTree` over the tile roots; a smaller one lies in a single tile, and only the tile on
    the path down to the proven leaf or the one at the right edge can hold it. A proof thus
    reads at most two tiles of leaves (each read and hashed once, however many proofs use it),
    where `inclusion_proof` reads and hashes the whole log: O(size / TILE_SIZE) hashes up front,
    then O(TILE_SIZE + log n) per new tile and O(log² n) lookups per proof.
    """

    __slots__ = ("_leaves_of", "_size", "_tiles", "_upper")

    def __init__(
        self, size: int, tiles: Sequence[bytes], leaves_of: Callable[[int, int], Sequence[bytes]]
    ) -> None:
        complete = size // TILE_SIZE
        if len(tiles) < complete:
            raise ValueError(f"a tree of {size} leaves needs {complete} tiles")
        self._size = size
        self._upper = MerkleTree(tiles[:complete])
        self._leaves_of = leaves_of
        self._tiles: dict[int, MerkleTree] = {}

    @property
    def size(self) -> int:
        return self._size

    def root(self) -> bytes:
        return _blocks(0, self._size, self._block)

    def inclusion_proof(self, index: int) -> list[bytes]:
        """PATH(index, D[size]), as `inclusion_proof` gives it."""
        return _path(index, self._size, lambda lo, hi: _blocks(lo, hi, self._block))

    def _block(self, height: int, position: int) -> bytes:
        if height >= TILE_HEIGHT:
            return self._upper._levels[height - TILE_HEIGHT][position >> height]
        tile = position >> TILE_HEIGHT
        tree = self._tiles.get(tile)
        if tree is None:
            first = tile * TILE_SIZE
            leaves = self._leaves_of(first, min(first + TILE_SIZE, self._size))
            tree = self._tiles[tile] = MerkleTree(leaves)
        return tree._levels[height][(position - tile * TILE_SIZE) >> height]


class MerkleFrontier:
    """The right edge of a growing log: append leaves, read the root, in O(log n).

    ``nodes[i]`` is the root of a perfect subtree; sizes strictly decrease left to right and
    follow the binary digits of ``size``. Rebuild after a restart with `from_leaves`.
    """

    __slots__ = ("_nodes", "_size")

    def __init__(self) -> None:
        self._nodes: list[tuple[int, bytes]] = []  # (height, hash)
        self._size = 0

    @classmethod
    def from_leaves(cls, leaves: Sequence[bytes]) -> MerkleFrontier:
        frontier = cls()
        for leaf in leaves:
            frontier.append(leaf)
        return frontier

    @classmethod
    def resume(cls, size: int, edge: bytes) -> MerkleFrontier:
        """The frontier of a tree of ``size`` leaves from its `edge`, as stored with a checkpoint:
        one hash per set bit of ``size``, the highest first."""
        heights = [h for h in range(size.bit_length() - 1, -1, -1) if size >> h & 1]
        if size < 0 or len(edge) != HASH_SIZE * len(heights):
            raise ValueError(f"an edge of {len(edge)} bytes does not fit a tree of size {size}")
        frontier = cls()
        frontier._nodes = [
            (height, edge[i * HASH_SIZE : (i + 1) * HASH_SIZE]) for i, height in enumerate(heights)
        ]
        frontier._size = size
        return frontier

    @property
    def edge(self) -> bytes:
        """The roots of the perfect subtrees along the right edge, highest first: with the size,
        all it takes to go on appending (`resume`)."""
        return b"".join(node for _, node in self._nodes)

    @property
    def size(self) -> int:
        return self._size

    def append(self, leaf: bytes) -> None:
        _push(self._nodes, leaf)
        self._size += 1

    def root(self) -> bytes:
        return _fold(self._nodes)


def _subtree(leaves: Sequence[bytes], lo: int, hi: int) -> bytes:
    """MTH(D[lo:hi]) in O(hi - lo) hashes with a stack of perfect subtrees."""
    stack: list[tuple[int, bytes]] = []
    for i in range(lo, hi):
        _push(stack, leaves[i])
    return _fold(stack)


def _push(stack: list[tuple[int, bytes]], leaf: bytes) -> None:
    """Append a leaf, merging equal-height perfect subtrees like a binary counter carries."""
    height, node = 0, leaf
    while stack and stack[-1][0] == height:
        _, left = stack.pop()
        height, node = height + 1, node_hash(left, node)
    stack.append((height, node))


def _fold(stack: list[tuple[int, bytes]]) -> bytes:
    """Combine the perfect subtrees right to left: MTH splits at the largest power of two."""
    if not stack:
        return EMPTY_ROOT
    node = stack[-1][1]
    for _, left in reversed(stack[:-1]):
        node = node_hash(left, node)
    return node


def _split(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)
