-- Counting live memories per request (the "…N more" of the compact index and BM25's N) by an
-- index-only scan: the columns of the liveness test are carried in the index.
CREATE INDEX memories_live ON memories (tenant_id, namespace)
    INCLUDE (expires_at, created_at, erased_at) WHERE deleted_at IS NULL;
