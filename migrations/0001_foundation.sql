-- ctxgw foundation: tenants, API keys, memories as immutable versions.
-- Forward-only. Every table carries tenant_id and every primary/unique key starts with it, so a
-- tenant-sharded engine (distribution column tenant_id) can serve the same schema.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE tenants (
    tenant_id   text PRIMARY KEY CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- A key is presented as ctxgw.<tenant_id>.<key_id>.<secret>; only sha256(secret) is stored.
-- The secret has 256 bits of entropy, so a fast hash is enough (no password stretching needed).
CREATE TABLE api_keys (
    tenant_id      text NOT NULL REFERENCES tenants (tenant_id),
    key_id         text NOT NULL CHECK (key_id ~ '^[0-9a-z]{26}$'),
    secret_sha256  bytea NOT NULL CHECK (octet_length(secret_sha256) = 32),
    role           text NOT NULL CHECK (role IN ('agent', 'auditor', 'admin')),
    agent_id       text,
    namespaces     text[] NOT NULL,          -- '{*}' means every namespace of the tenant
    purposes       text[],                   -- NULL means any purpose
    created_at     timestamptz NOT NULL DEFAULT now(),
    revoked_at     timestamptz,
    PRIMARY KEY (tenant_id, key_id)
);

CREATE TABLE memories (
    tenant_id        text NOT NULL REFERENCES tenants (tenant_id),
    memory_id        text NOT NULL CHECK (memory_id ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
    namespace        text NOT NULL CHECK (namespace ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
    memory_type      text NOT NULL CHECK (memory_type IN ('semantic', 'episodic', 'procedural', 'working')),
    heading          text NOT NULL CHECK (char_length(heading) BETWEEN 1 AND 200),
    content          text NOT NULL,
    confidence       numeric(4, 3) NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    labels           text[] NOT NULL DEFAULT '{}',
    source_type      text,
    source_ref       text,
    claim_key        text,
    supersedes       text,
    superseded_by    text,
    agent_id         text,
    written_by_key   text NOT NULL,
    idempotency_key  text,
    request_sha256   text,                   -- what the idempotent write asked for
    created_at       timestamptz NOT NULL,
    expires_at       timestamptz,
    deleted_at       timestamptz,
    deleted_reason   text,
    erased_at        timestamptz,
    content_sha256   text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
    heading_tokens   integer NOT NULL CHECK (heading_tokens >= 0),
    tokens           integer NOT NULL CHECK (tokens >= 0),
    embedding        vector,
    embedding_model  text NOT NULL,
    embedding_dim    integer NOT NULL,
    tsv              tsvector GENERATED ALWAYS AS (
                         to_tsvector('english'::regconfig, heading || ' ' || content)
                     ) STORED,
    PRIMARY KEY (tenant_id, memory_id),
    UNIQUE (tenant_id, idempotency_key),
    CHECK (embedding IS NOT NULL OR erased_at IS NOT NULL),
    CHECK ((deleted_at IS NULL) = (deleted_reason IS NULL)),
    CHECK (superseded_by IS NULL OR deleted_at IS NOT NULL)
);

-- Tier 1 (the compact index): live memories per namespace, confidence desc then memory_id.
CREATE INDEX memories_index_order ON memories (tenant_id, namespace, confidence DESC, memory_id)
    WHERE deleted_at IS NULL;
CREATE INDEX memories_tsv ON memories USING gin (tsv);
CREATE INDEX memories_supersedes ON memories (tenant_id, supersedes) WHERE supersedes IS NOT NULL;
-- One HNSW index per vector dimension (partial, on a typed cast): the hash embedder and
-- all-MiniLM-L6-v2 are both 384-dimensional. Other dimensions get their index at start-up.
CREATE INDEX memories_embedding_384 ON memories
    USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE embedding_dim = 384;

-- Versions are immutable. Only the one-way fields may be set, once; erasure (right to be
-- forgotten) is the single exception and runs through erase_memory() below.
CREATE FUNCTION memories_guard_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('ctxgw.erasing', true) = OLD.tenant_id || '/' || OLD.memory_id
       AND NEW.content = '' AND NEW.embedding IS NULL AND NEW.erased_at IS NOT NULL
       AND OLD.erased_at IS NULL THEN
        RETURN NEW;
    END IF;
    IF (NEW.tenant_id, NEW.memory_id, NEW.namespace, NEW.memory_type, NEW.heading, NEW.content,
        NEW.confidence, NEW.labels, NEW.source_type, NEW.source_ref, NEW.claim_key, NEW.supersedes,
        NEW.agent_id, NEW.written_by_key, NEW.idempotency_key, NEW.request_sha256, NEW.created_at,
        NEW.expires_at, NEW.erased_at, NEW.content_sha256, NEW.heading_tokens, NEW.tokens,
        NEW.embedding_model, NEW.embedding_dim)
       IS DISTINCT FROM
       (OLD.tenant_id, OLD.memory_id, OLD.namespace, OLD.memory_type, OLD.heading, OLD.content,
        OLD.confidence, OLD.labels, OLD.source_type, OLD.source_ref, OLD.claim_key, OLD.supersedes,
        OLD.agent_id, OLD.written_by_key, OLD.idempotency_key, OLD.request_sha256, OLD.created_at,
        OLD.expires_at, OLD.erased_at, OLD.content_sha256, OLD.heading_tokens, OLD.tokens,
        OLD.embedding_model, OLD.embedding_dim)
       OR NEW.embedding IS DISTINCT FROM OLD.embedding THEN
        RAISE EXCEPTION 'memory % is an immutable version; write a new version with supersedes', OLD.memory_id
            USING ERRCODE = 'check_violation';
    END IF;
    IF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS DISTINCT FROM OLD.deleted_at
       OR OLD.deleted_reason IS NOT NULL AND NEW.deleted_reason IS DISTINCT FROM OLD.deleted_reason
       OR OLD.superseded_by IS NOT NULL AND NEW.superseded_by IS DISTINCT FROM OLD.superseded_by THEN
        RAISE EXCEPTION 'memory % was already retired; deleted_at, deleted_reason and superseded_by are set once', OLD.memory_id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER memories_immutable BEFORE UPDATE ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_guard_update();

CREATE FUNCTION memories_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'memories are never physically deleted; use a soft delete or erase_memory()'
        USING ERRCODE = 'check_violation';
END;
$$;

CREATE TRIGGER memories_no_delete BEFORE DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_refuse_delete();
CREATE TRIGGER memories_no_truncate BEFORE TRUNCATE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION memories_refuse_delete();
ALTER TABLE memories ENABLE ALWAYS TRIGGER memories_immutable;
ALTER TABLE memories ENABLE ALWAYS TRIGGER memories_no_delete;
ALTER TABLE memories ENABLE ALWAYS TRIGGER memories_no_truncate;

-- Erasure: blanks content and embedding of one version and records when; hashes stay, so
-- receipts that disclosed it still verify (and exact replay can say "erased" precisely).
CREATE TABLE erasures (
    tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
    memory_id   text NOT NULL,
    erased_at   timestamptz NOT NULL,
    reason      text NOT NULL,
    PRIMARY KEY (tenant_id, memory_id)
);

CREATE FUNCTION erase_memory(p_tenant text, p_memory text, p_reason text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('ctxgw.erasing', p_tenant || '/' || p_memory, true);
    UPDATE memories SET content = '', embedding = NULL, erased_at = now()
     WHERE tenant_id = p_tenant AND memory_id = p_memory AND erased_at IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'memory %/% not found or already erased', p_tenant, p_memory
            USING ERRCODE = 'no_data_found';
    END IF;
    INSERT INTO erasures (tenant_id, memory_id, erased_at, reason) VALUES (p_tenant, p_memory, now(), p_reason);
    PERFORM set_config('ctxgw.erasing', '', true);
END;
$$;
