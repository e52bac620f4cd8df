-- Write order within a namespace, for recall's context lookup: the live memory written just
-- before and just after each of the strongest hits (gateway/store/retrieval.py, `adjacent`).
-- The tenant-wide memories_created index would walk past every other namespace's writes in
-- between; this one reaches each neighbour in one probe.
CREATE INDEX memories_written ON memories (tenant_id, namespace, created_at, memory_id);
