-- A memory's embedding stays in its row. pgvector gives `vector` EXTERNAL storage, so once a row
-- is past the 2 kB TOAST target (a long turn's content and tsvector take it there) its 1.5 kB
-- 384-float embedding is moved to the TOAST table, and every distance the recall computes from
-- the row (the exact scan the planner picks for a small scope, as a session's namespace is, and
-- the distances of the HNSW hits) first fetches it back through the TOAST index. MAIN keeps it
-- inline and uncompressed (floats do not compress) and moves it out only when the row cannot fit
-- a page any other way, so wider embeddings still store. Measured on 1,000 LongMemEval turns:
-- the vector branch of the recall statement 4.0-4.9 ms before, 1.5-1.9 ms after (EXPLAIN
-- ANALYZE). Rows written before keep their out-of-line copy.
ALTER TABLE memories ALTER COLUMN embedding SET STORAGE MAIN;
