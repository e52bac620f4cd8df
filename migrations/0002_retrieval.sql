-- Retrieval support: the compact index across every namespace of a tenant (keys with '*'), and
-- the memory_type filter of hybrid recall.

CREATE INDEX memories_index_order_all ON memories (tenant_id, confidence DESC, memory_id)
    WHERE deleted_at IS NULL;
CREATE INDEX memories_created ON memories (tenant_id, created_at);
