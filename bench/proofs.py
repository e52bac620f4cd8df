"""Inclusion proofs for a filtered export: k receipts out of a log of n, each line with its proof
to the checkpoint (what GET /v1/receipts/export?memory_id=… does, `gateway.usecases.audit.verification`);
and the hashing of a checkpoint after 100 new receipts (`gateway.usecases.receiptlog.checkpoints`).

Baseline and candidate in the same run, on the same leaves (synthetic leaf hashes; a proof
depends on nothing else):

- per call: `receipts.inclusion_proof(i, leaves)`, O(n) hashes per proof (the export before);
- hashed tree: `receipts.MerkleTree(leaves)` once, then `tree.inclusion_proof(i)` per line;
- from tiles (the gateway now): `receipts.TiledTree` over the stored tile roots, reading only the
  tiles the exported lines lie in (the leaf hashes read from the database are counted).

Both must give the same proofs (checked on every sampled index). Reported: p50/p99 per proof,
the tree's build time, and the estimated time for the whole export (build + k proofs, vs k
per-call proofs). Checkpoint: the root from every leaf (before) vs the previous checkpoint's
stored edge plus the new leaves (`MerkleFrontier.resume`); hashing only, in memory (the gateway
also stops reading the whole log from PostgreSQL). One proof (GET /v1/receipts/{id}/proof): from
every leaf (before) vs from the stored tile roots and two tiles of leaves
(`receipts.tiled_inclusion_proof`), with the leaf hashes each reads from the database.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import time
from collections.abc import Callable
from functools import partial

from bench.harness import machine, markdown_table, percentile, write_result
from receipts import MerkleFrontier, MerkleTree, inclusion_proof, leaf_hash
from receipts.merkle import TILE_SIZE, TiledTree, tile_roots, tiled_inclusion_proof

__all__ = ["main"]


def _leaves(n: int) -> list[bytes]:
    return [leaf_hash(hashlib.sha256(i.to_bytes(8, "big")).digest()) for i in range(n)]


def _timed(call: Callable[[int], object], args: list[int]) -> list[float]:
    times = []
    for index in args:
        start = time.perf_counter()
        call(index)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def _per_call(index: int, leaves: list[bytes]) -> list[bytes]:
    return inclusion_proof(index, leaves)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench proofs", description=__doc__)
    parser.add_argument("--sizes", default="10000,100000", help="log sizes n, comma-separated")
    parser.add_argument("--exported", type=int, default=1000, help="lines k in the export")
    parser.add_argument("--samples", type=int, default=20, help="per-call proofs timed")
    args = parser.parse_args(argv)
    rng = random.Random(7)
    rows = []
    result: dict[str, object] = {"machine": machine(), "exported": args.exported, "sizes": {}}
    for n in (int(size) for size in args.sizes.split(",")):
        leaves = _leaves(n)
        start = time.perf_counter()
        tree = MerkleTree(leaves)
        build_ms = (time.perf_counter() - start) * 1e3
        picked = rng.sample(range(n), min(args.samples, n))
        for index in picked:
            assert tree.inclusion_proof(index) == inclusion_proof(index, leaves), index
        per_call = _timed(partial(_per_call, leaves=leaves), picked)
        exported = sorted(rng.sample(range(n), min(args.exported, n)))
        hashed = _timed(tree.inclusion_proof, exported)
        export_before = percentile(per_call, 50) * args.exported
        export_after = build_ms + sum(hashed)
        # The gateway now: the stored tile roots, hashed once, and the tiles the lines lie in.
        tiles = tile_roots(leaves)
        starts: set[int] = set()  # of the tiles whose leaves were read

        def tile_of(
            lo: int, hi: int, leaves: list[bytes] = leaves, starts: set[int] = starts
        ) -> list[bytes]:
            starts.add(lo)
            return leaves[lo:hi]

        start = time.perf_counter()
        tiled_tree = TiledTree(n, tiles, tile_of)
        tiled_proofs = [tiled_tree.inclusion_proof(index) for index in exported]
        export_tiled = (time.perf_counter() - start) * 1e3
        assert tiled_proofs == [tree.inclusion_proof(index) for index in exported]
        tiled_read = len(tiles) + sum(min(TILE_SIZE, n - lo) for lo in starts)
        rows.append(
            [
                f"{n:,}",
                percentile(per_call, 50),
                percentile(hashed, 50) * 1e3,
                percentile(hashed, 99) * 1e3,
                build_ms,
                export_before / 1e3,
                export_after / 1e3,
                f"{export_before / export_after:.0f}×",
                export_tiled / 1e3,
                f"{n:,} → {tiled_read:,}",
            ]
        )
        result["sizes"][str(n)] = {  # type: ignore[index]
            "per_call_p50_ms": percentile(per_call, 50),
            "tree_p50_us": percentile(hashed, 50) * 1e3,
            "tree_p99_us": percentile(hashed, 99) * 1e3,
            "tree_build_ms": build_ms,
            "export_before_s": export_before / 1e3,
            "export_after_s": export_after / 1e3,
            "export_tiled_s": export_tiled / 1e3,
            "export_hashes_read_tiled": tiled_read,
        }
    headers = [
        "log size n",
        "per call p50 ms",
        "tree p50 µs",
        "tree p99 µs",
        "tree build ms",
        f"export of {args.exported} before s",
        "hashed tree s",
        "speed-up",
        "from tiles s",
        "hashes read",
    ]
    print(markdown_table(headers, rows))
    checkpoints = []
    for n in (int(size) for size in args.sizes.split(",")):
        leaves = _leaves(n + 100)
        start = time.perf_counter()
        full = MerkleFrontier.from_leaves(leaves).root()
        before_ms = (time.perf_counter() - start) * 1e3
        edge = MerkleFrontier.from_leaves(leaves[:n]).edge
        start = time.perf_counter()
        resumed = MerkleFrontier.resume(n, edge)
        for leaf in leaves[n:]:
            resumed.append(leaf)
        after_ms = (time.perf_counter() - start) * 1e3
        assert resumed.root() == full
        checkpoints.append([f"{n:,} + 100", before_ms, after_ms, f"{before_ms / after_ms:.0f}×"])
        result["checkpoint_" + str(n)] = {"before_ms": before_ms, "after_ms": after_ms}
    print()
    print(
        markdown_table(
            ["log size", "root from every leaf ms", "from the edge ms", "ratio"], checkpoints
        )
    )
    singles = []
    for n in (int(size) for size in args.sizes.split(",")):
        leaves = _leaves(n)
        tiles = tile_roots(leaves)  # as stored by the checkpoints
        picked = rng.sample(range(n), min(args.samples, n))

        def tiled(
            index: int, leaves: list[bytes] = leaves, tiles: list[bytes] = tiles
        ) -> list[bytes]:
            return tiled_inclusion_proof(index, len(leaves), tiles, lambda lo, hi: leaves[lo:hi])

        for index in picked:
            assert tiled(index) == inclusion_proof(index, leaves), index
        whole = _timed(partial(_per_call, leaves=leaves), picked)
        from_tiles = _timed(tiled, picked)
        read = n // TILE_SIZE + 2 * TILE_SIZE
        singles.append(
            [
                f"{n:,}",
                percentile(whole, 50),
                percentile(from_tiles, 50),
                f"{percentile(whole, 50) / percentile(from_tiles, 50):.0f}×",
                f"{n:,}",
                f"≤ {read:,}",
            ]
        )
        result["single_" + str(n)] = {
            "whole_log_p50_ms": percentile(whole, 50),
            "tiles_p50_ms": percentile(from_tiles, 50),
            "hashes_read_whole": n,
            "hashes_read_tiles_at_most": read,
        }
    print()
    print(
        markdown_table(
            [
                "log size",
                "one proof from every leaf p50 ms",
                "from tiles p50 ms",
                "ratio",
                "hashes read before",
                "after",
            ],
            singles,
        )
    )
    print(f"raw: {write_result('proofs', result)}")
    return 0
