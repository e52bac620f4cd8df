-- The right edge of the receipt log's Merkle tree at each checkpoint: the roots of its perfect
-- subtrees, left to right, 32 bytes each (their heights are the set bits of `size`). The next
-- checkpoint then hashes only the receipts appended since, instead of reading and hashing the
-- whole log every few seconds. NULL on checkpoints written before this column: the next one
-- rebuilds the edge from every leaf, once.
ALTER TABLE checkpoints ADD COLUMN frontier bytea
    CHECK (frontier IS NULL OR octet_length(frontier) % 32 = 0);
