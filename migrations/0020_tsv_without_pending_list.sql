-- Full-text recall reads the GIN index on memories.tsv once per query term (the bounded document
-- frequency probes) and once more for the matches. With GIN's fast update (the default), new
-- entries wait in a pending list until a VACUUM, an autoanalyze or 4 MB of them flush it, and every
-- index scan reads the whole list. A namespace that grows by one remembered turn per append always
-- has one: at 500 turns the planner priced the index above a sequential scan and each probe
-- detoasted every memory's tsvector instead (EXPLAIN ANALYZE: 23 probes, 20 of 47 ms of the recall
-- statement; after a flush 0.8 ms). Without fast update an insert writes its entries into the index
-- directly, so a scan never meets a pending list, whenever it runs.
ALTER INDEX memories_tsv SET (fastupdate = off);
-- What is pending now is not flushed by the change itself.
SELECT gin_clean_pending_list('memories_tsv'::regclass);
