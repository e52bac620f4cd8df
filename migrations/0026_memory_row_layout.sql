-- A memory's row keeps what recall reads of every row it considers: the tsvector, the embedding
-- and the identifiers, inline and uncompressed.
--
-- PostgreSQL cuts a row past 2 kB down to that size, moving and compressing its largest values
-- first. A remembered turn's row is past it almost always (the embedding alone is 1.5 kB), so the
-- lexical recall, which reads the tsvector of every match, fetched each back through the TOAST
-- index: on the 500 turns of the sessions benchmark's session, 493 tsvectors were out of line.
-- Keeping only the tsvector in (MAIN, as the embedding is since 0024) is not enough: the toaster
-- then moves the next largest values out, down to the 26-character memory ids that every step
-- of recall hashes, sorts and joins (445 of the 500), and compresses the embeddings (421, the
-- hash embedder's vectors are sparse), so each distance decompressed one first.
--
-- So: the row is cut only past a page (toast_tuple_target, the largest allowed), and then the
-- content leaves first; the tsvector, the embedding and what a candidate shows beside its
-- content (heading, labels, source) leave only when the row cannot fit a page otherwise (MAIN);
-- the bounded identifiers never leave (PLAIN: pattern-checked, a few hundred bytes together).
-- On that session, nothing is out of line or compressed; the heap is 261 pages instead of 127
-- (contents inline), the table with its TOAST and indexes 491 instead of 473. Rows written
-- before keep their layout until rewritten (0027 rewrites the table).
ALTER TABLE memories
    SET (toast_tuple_target = 8160),
    ALTER COLUMN tenant_id SET STORAGE PLAIN,
    ALTER COLUMN memory_id SET STORAGE PLAIN,
    ALTER COLUMN namespace SET STORAGE PLAIN,
    ALTER COLUMN memory_type SET STORAGE PLAIN,
    ALTER COLUMN supersedes SET STORAGE PLAIN,
    ALTER COLUMN superseded_by SET STORAGE PLAIN,
    ALTER COLUMN content_sha256 SET STORAGE PLAIN,
    ALTER COLUMN claim_key SET STORAGE PLAIN,
    ALTER COLUMN scope_key SET STORAGE PLAIN,
    ALTER COLUMN tsv SET STORAGE MAIN,
    ALTER COLUMN heading SET STORAGE MAIN,
    ALTER COLUMN labels SET STORAGE MAIN,
    ALTER COLUMN source_type SET STORAGE MAIN,
    ALTER COLUMN source_ref SET STORAGE MAIN;
