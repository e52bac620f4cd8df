-- Compile (ARCHITECTURE §12): episodes become typed facts with provenance; a newer fact for one
-- claim supersedes the older (each decision a row of `supersessions`); facts the rules cannot
-- order are a `conflicts` row; compiles are `compile_jobs`, and each scope remembers how far it
-- was compiled (`compile_watermarks`).

-- Provenance of a compiled fact: the turn and memory ids it came from (erasing one of them finds
-- the facts derived from it: `WHERE tenant_id = $1 AND sources @> ARRAY[$2]`), the extractor that
-- wrote it (name/version), when the fact became true (its source turn's time) and its value.
-- The decision that superseded a version is set once, with superseded_by.
ALTER TABLE memories
    ADD COLUMN sources text[] NOT NULL DEFAULT '{}',
    ADD COLUMN extractor text,
    ADD COLUMN valid_from timestamptz,
    ADD COLUMN claim_value text,       -- the value as stated ("Starter"), and the one a change
    ADD COLUMN claim_previous text,    -- "from X to Y" replaced: how stale raw turns are found
    ADD COLUMN superseded_decision text,
    ADD CONSTRAINT memories_decision_with_successor
        CHECK (superseded_decision IS NULL OR superseded_by IS NOT NULL);
CREATE INDEX memories_sources ON memories USING gin (sources) WHERE sources <> '{}';
-- The live versions of one claim: what a write naming a claim key competes with.
CREATE INDEX memories_claims ON memories (tenant_id, namespace, claim_key)
    WHERE deleted_at IS NULL AND claim_key IS NOT NULL;
-- The live compiled facts of one namespace and type: the similarity fallback's competitors.
CREATE INDEX memories_compiled ON memories (tenant_id, namespace, memory_type)
    WHERE deleted_at IS NULL AND extractor IS NOT NULL;

-- The guard of 0001 with the new columns: provenance is as immutable as content, and the
-- decision is one more one-way field.
CREATE OR REPLACE FUNCTION memories_guard_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
        NEW.embedding_model, NEW.embedding_dim, NEW.sources, NEW.extractor, NEW.valid_from,
        NEW.claim_value, NEW.claim_previous)
       IS DISTINCT FROM
       (OLD.tenant_id, OLD.memory_id, OLD.namespace, OLD.memory_type, OLD.heading, OLD.content,
        OLD.confidence, OLD.labels, OLD.source_type, OLD.source_ref, OLD.claim_key, OLD.supersedes,
        OLD.agent_id, OLD.written_by_key, OLD.idempotency_key, OLD.request_sha256, OLD.created_at,
        OLD.expires_at, OLD.erased_at, OLD.content_sha256, OLD.heading_tokens, OLD.tokens,
        OLD.embedding_model, OLD.embedding_dim, OLD.sources, OLD.extractor, OLD.valid_from,
        OLD.claim_value, OLD.claim_previous)
       OR NEW.embedding IS DISTINCT FROM OLD.embedding THEN
        RAISE EXCEPTION 'memory % is an immutable version; write a new version with supersedes', OLD.memory_id
            USING ERRCODE = 'check_violation';
    END IF;
    IF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS DISTINCT FROM OLD.deleted_at
       OR OLD.deleted_reason IS NOT NULL AND NEW.deleted_reason IS DISTINCT FROM OLD.deleted_reason
       OR OLD.superseded_by IS NOT NULL AND NEW.superseded_by IS DISTINCT FROM OLD.superseded_by
       OR OLD.superseded_decision IS NOT NULL
          AND NEW.superseded_decision IS DISTINCT FROM OLD.superseded_decision THEN
        RAISE EXCEPTION 'memory % was already retired; deleted_at, deleted_reason and superseded_by are set once', OLD.memory_id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

-- Every supersession decision: which version replaced which, by what rule, with the score and
-- threshold when the rule measured one, and the compile job that made it (NULL for a write).
CREATE TABLE supersessions (
    tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
    decision_id  text NOT NULL CHECK (decision_id ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
    namespace    text NOT NULL,
    older        text NOT NULL,
    newer        text NOT NULL,
    rule         text NOT NULL CHECK (rule IN ('explicit', 'claim_key', 'similarity', 'source', 'value', 'resolved')),
    score        numeric(4, 3),
    threshold    numeric(4, 3),
    claim_key    text,
    job_id       text,
    decided_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, decision_id),
    UNIQUE (tenant_id, older),
    CHECK (older <> newer)
);
CREATE INDEX supersessions_newer ON supersessions (tenant_id, newer);

CREATE TABLE compile_jobs (
    tenant_id          text NOT NULL REFERENCES tenants (tenant_id),
    job_id             text NOT NULL CHECK (job_id ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
    namespace          text NOT NULL,
    session_id         text,                 -- NULL: the namespace's episodic memories
    extractor          text NOT NULL,        -- name/version
    status             text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    created            integer NOT NULL DEFAULT 0,
    superseded         integer NOT NULL DEFAULT 0,
    conflicts          integer NOT NULL DEFAULT 0,
    skipped            integer NOT NULL DEFAULT 0,
    error              text,
    attempts           integer NOT NULL DEFAULT 0,
    agent_id           text,
    requested_by_key   text NOT NULL,
    requested_at       timestamptz NOT NULL,
    heartbeat_at       timestamptz,
    finished_at        timestamptz,
    PRIMARY KEY (tenant_id, job_id),
    CHECK ((status IN ('completed', 'failed')) = (finished_at IS NOT NULL))
);
-- What a worker claims: pending jobs, and running ones whose heartbeat stopped.
CREATE INDEX compile_jobs_open ON compile_jobs (requested_at)
    WHERE status IN ('pending', 'running');

-- How far a scope was compiled by one extractor version: turns up to `through_seq` of a session,
-- or episodic memories up to `through_memory` (ULIDs grow with time) of a namespace.
CREATE TABLE compile_watermarks (
    tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
    scope           text NOT NULL,          -- 'session:<id>' or 'namespace:<name>'
    extractor       text NOT NULL,
    through_seq     bigint NOT NULL DEFAULT 0,
    through_memory  text NOT NULL DEFAULT '',
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, scope, extractor)
);

-- Two live facts for one claim the rules cannot order (same instant): both stay live and are
-- shown side by side until someone resolves it (a supersession with rule `resolved`).
CREATE TABLE conflicts (
    tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
    conflict_id   text NOT NULL CHECK (conflict_id ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
    namespace     text NOT NULL,
    claim_key     text NOT NULL,
    first_id      text NOT NULL,
    second_id     text NOT NULL,
    opened_at     timestamptz NOT NULL,
    job_id        text,
    resolved_at   timestamptz,
    winner        text,
    reason        text,
    decision_id   text,
    resolved_by   text,
    PRIMARY KEY (tenant_id, conflict_id),
    UNIQUE (tenant_id, first_id, second_id),
    CHECK (first_id < second_id),
    CHECK ((resolved_at IS NULL) = (winner IS NULL))
);
CREATE INDEX conflicts_open ON conflicts (tenant_id, namespace) WHERE resolved_at IS NULL;

CREATE TRIGGER supersessions_append_only BEFORE UPDATE OR DELETE ON supersessions
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER supersessions_no_truncate BEFORE TRUNCATE ON supersessions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
ALTER TABLE supersessions ENABLE ALWAYS TRIGGER supersessions_append_only;
ALTER TABLE supersessions ENABLE ALWAYS TRIGGER supersessions_no_truncate;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT SELECT, INSERT ON supersessions TO ctxgw_app;
        GRANT SELECT, INSERT, UPDATE ON compile_jobs, compile_watermarks, conflicts TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant on the compile tables to ctxgw_app';
END;
$$;
