-- Full-text recall reads the GIN index on memories.tsv once per query term (the bounded document
-- frequency probes) and once more for the matches. GIN's fast update puts new entries in a pending
-- list that every index scan reads whole, and only a VACUUM, an autoanalyze or 4 MB of entries
-- (the default gin_pending_list_limit) move them into the index. A namespace that grows by one
-- remembered turn per append always has such a list: at 500 turns it held all 500 memories, the
-- planner priced the index above a scan, and each of 23 probes detoasted every memory's tsvector
-- (EXPLAIN ANALYZE: 47 ms for the recall statement; 9 ms after a flush). Turning fast update off
-- removed the list but halved batch ingest (each row's entries inserted one by one, measured with
-- `bench ingest`); the smallest limit (64 kB, eight pages) keeps inserts batched and bounds what a
-- scan reads: 11 ms on the same namespace.
ALTER INDEX memories_tsv SET (gin_pending_list_limit = 64);
-- Entries already pending stay there until something flushes them: flush them now.
SELECT gin_clean_pending_list('memories_tsv'::regclass);
