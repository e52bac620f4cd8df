-- An idempotency key answers for the writes made with it in one namespace, not in the whole
-- tenant. Unique per tenant, a key first used in a namespace a caller may not read answered that
-- caller's fresh write with 409 (or with the other write's id), where an unused key answered 201:
-- the key told it that something it may not see exists. Per namespace, a retry still lands once
-- (a retry writes to the namespace its first attempt wrote to, and a compiled fact's key names
-- its namespace), and a key reused in the same namespace for another memory is still a 409.
--
-- The memories' index covers the rows that have a key only: as a full index, the planner could
-- read a tenant's memories through it where no HNSW index serves a vector search, and the
-- recall's ties at an equal distance would then come in another order than before. The key comes
-- before the namespace, so a lookup by key alone (a remembered turn's memory, by
-- `turn:<turn_id>`) still reads the index's prefix.
ALTER TABLE memories DROP CONSTRAINT memories_tenant_id_idempotency_key_key;
CREATE UNIQUE INDEX memories_idempotency_key ON memories (tenant_id, idempotency_key, namespace)
    WHERE idempotency_key IS NOT NULL;
ALTER TABLE sessions
    DROP CONSTRAINT sessions_tenant_id_idempotency_key_key,
    ADD CONSTRAINT sessions_idempotency_key UNIQUE (tenant_id, idempotency_key, namespace);
