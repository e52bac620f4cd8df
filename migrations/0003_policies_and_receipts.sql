-- Policy bundles (content-addressed, kept forever), their activations, and the receipt log.
-- Receipts and checkpoints are append-only: triggers reject UPDATE, DELETE and TRUNCATE, enabled
-- ALWAYS so that session_replication_role tricks do not bypass them.

CREATE TABLE policy_bundles (
    tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
    digest       text NOT NULL CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
    canonical    bytea NOT NULL,
    source       text NOT NULL,
    name         text NOT NULL,
    revision     text,
    uploaded_at  timestamptz NOT NULL DEFAULT now(),
    uploaded_by  text NOT NULL,
    PRIMARY KEY (tenant_id, digest)
);

CREATE TABLE policy_activations (
    tenant_id     text NOT NULL REFERENCES tenants (tenant_id),
    activation    bigint GENERATED ALWAYS AS IDENTITY,
    digest        text NOT NULL,
    mode          text NOT NULL CHECK (mode IN ('enforce', 'log_only')),
    activated_at  timestamptz NOT NULL DEFAULT now(),
    activated_by  text NOT NULL,
    PRIMARY KEY (tenant_id, activation),
    FOREIGN KEY (tenant_id, digest) REFERENCES policy_bundles (tenant_id, digest)
);

-- The head of each tenant's log: locked FOR UPDATE while a receipt is appended, which makes seq
-- gapless per tenant while different tenants never wait for each other.
CREATE TABLE receipt_logs (
    tenant_id  text PRIMARY KEY REFERENCES tenants (tenant_id),
    size       bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
    head       bytea NOT NULL DEFAULT '\x0000000000000000000000000000000000000000000000000000000000000000'
);

CREATE TABLE receipts (
    tenant_id          text NOT NULL REFERENCES tenants (tenant_id),
    seq                bigint NOT NULL CHECK (seq >= 1),
    receipt_id         text NOT NULL,
    kind               text NOT NULL,
    agent_id           text,
    key_id             text NOT NULL,
    issued_at          timestamptz NOT NULL,
    body               bytea NOT NULL,          -- the exact signed bytes (RFC 8785)
    envelope           jsonb NOT NULL,          -- DSSE envelope with its signatures
    prev               bytea NOT NULL CHECK (octet_length(prev) = 32),
    leaf               bytea NOT NULL CHECK (octet_length(leaf) = 32),
    bundle_sha256      text,
    policy_digest      text,
    parent_receipt_id  text,
    disclosed_ids      text[] NOT NULL DEFAULT '{}',   -- every memory whose text reached the caller
    PRIMARY KEY (tenant_id, seq),
    UNIQUE (tenant_id, receipt_id)
);

CREATE INDEX receipts_agent ON receipts (tenant_id, agent_id, seq);
CREATE INDEX receipts_kind ON receipts (tenant_id, kind, seq);
CREATE INDEX receipts_issued ON receipts (tenant_id, issued_at);
CREATE INDEX receipts_disclosed ON receipts USING gin (disclosed_ids);

CREATE TABLE checkpoints (
    tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
    size        bigint NOT NULL CHECK (size >= 0),
    root        bytea NOT NULL CHECK (octet_length(root) = 32),
    note        text NOT NULL,                 -- the Ed25519-signed note, byte-exact
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, size)
);

CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER receipts_append_only BEFORE UPDATE OR DELETE ON receipts
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER receipts_no_truncate BEFORE TRUNCATE ON receipts
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER checkpoints_append_only BEFORE UPDATE OR DELETE ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER checkpoints_no_truncate BEFORE TRUNCATE ON checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER policy_bundles_append_only BEFORE UPDATE OR DELETE ON policy_bundles
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER policy_activations_append_only BEFORE UPDATE OR DELETE ON policy_activations
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
ALTER TABLE receipts ENABLE ALWAYS TRIGGER receipts_append_only;
ALTER TABLE receipts ENABLE ALWAYS TRIGGER receipts_no_truncate;
ALTER TABLE checkpoints ENABLE ALWAYS TRIGGER checkpoints_append_only;
ALTER TABLE checkpoints ENABLE ALWAYS TRIGGER checkpoints_no_truncate;
ALTER TABLE policy_bundles ENABLE ALWAYS TRIGGER policy_bundles_append_only;
ALTER TABLE policy_activations ENABLE ALWAYS TRIGGER policy_activations_append_only;

-- The role the gateway works as (SET ROLE on every pooled connection when the connecting user may
-- assume it): it can append receipts and checkpoints but never change or remove them.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        BEGIN
            CREATE ROLE ctxgw_app NOLOGIN;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'cannot create role ctxgw_app; the gateway will run as the connecting user';
            RETURN;
        END;
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO ctxgw_app', current_schema());
    GRANT SELECT, INSERT, UPDATE ON tenants, api_keys, memories, receipt_logs TO ctxgw_app;
    GRANT SELECT, INSERT ON erasures, policy_bundles, policy_activations, receipts, checkpoints
        TO ctxgw_app;
    GRANT SELECT ON schema_migrations TO ctxgw_app;
    GRANT EXECUTE ON FUNCTION erase_memory(text, text, text) TO ctxgw_app;
    EXECUTE format('GRANT USAGE ON ALL SEQUENCES IN SCHEMA %I TO ctxgw_app', current_schema());
END;
$$;
