-- Sessions (ARCHITECTURE §11): history (session_turns, append-only), state (session_summaries,
-- immutable, each covering a prefix [1, to_seq] of the history) and the session itself, whose
-- only moving parts are the head of its history (turn_count, last_occurred_at).

CREATE TABLE sessions (
    tenant_id             text NOT NULL REFERENCES tenants (tenant_id),
    session_id            text NOT NULL CHECK (session_id ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
    namespace             text NOT NULL CHECK (namespace ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
    task                  text NOT NULL CHECK (char_length(task) >= 1),
    system_prompt         text,
    budget_tokens         integer NOT NULL CHECK (budget_tokens BETWEEN 1 AND 128000),
    keep_last             integer NOT NULL CHECK (keep_last BETWEEN 0 AND 100),
    memory_budget_tokens  integer CHECK (memory_budget_tokens >= 0),  -- NULL: a quarter of the budget
    remember_turns        boolean NOT NULL,
    labels                text[] NOT NULL DEFAULT '{}',
    agent_id              text,
    created_by_key        text NOT NULL,
    idempotency_key       text,
    request_sha256        text NOT NULL,
    created_at            timestamptz NOT NULL,
    -- The head of the history. An append takes this row's lock (UPDATE ... RETURNING) and numbers
    -- its turns from it, so concurrent appends are serialized: no seq is given twice or skipped.
    turn_count            bigint NOT NULL DEFAULT 0 CHECK (turn_count >= 0),
    last_occurred_at      timestamptz,
    PRIMARY KEY (tenant_id, session_id),
    UNIQUE (tenant_id, idempotency_key)
);

CREATE TABLE session_turns (
    tenant_id       text NOT NULL,
    session_id      text NOT NULL,
    seq             bigint NOT NULL CHECK (seq >= 1),
    turn_id         text NOT NULL CHECK (turn_id ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
    role            text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    name            text,
    content         text NOT NULL,
    content_sha256  text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
    tokens          integer NOT NULL CHECK (tokens >= 0),
    occurred_at     timestamptz NOT NULL,
    created_at      timestamptz NOT NULL,
    agent_id        text,
    written_by_key  text NOT NULL,
    PRIMARY KEY (tenant_id, session_id, seq),
    UNIQUE (tenant_id, turn_id),
    FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, session_id)
);

-- An idempotent append: a retry with the same key answers the seqs the first one was given.
CREATE TABLE session_appends (
    tenant_id        text NOT NULL,
    session_id       text NOT NULL,
    idempotency_key  text NOT NULL,
    request_sha256   text NOT NULL,
    first_seq        bigint NOT NULL,
    last_seq         bigint NOT NULL,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, session_id, idempotency_key),
    FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, session_id)
);

CREATE TABLE session_summaries (
    tenant_id            text NOT NULL,
    summary_id           text NOT NULL CHECK (summary_id ~ '^[0-9A-HJKMNP-TV-Z]{26}$'),
    session_id           text NOT NULL,
    to_seq               bigint NOT NULL CHECK (to_seq >= 1),  -- covers turns [1, to_seq]
    covered_sha256       text NOT NULL CHECK (covered_sha256 ~ '^[0-9a-f]{64}$'),
    text                 text NOT NULL,
    tokens               integer NOT NULL CHECK (tokens >= 0),
    summarizer           text NOT NULL,
    summarizer_version   text NOT NULL,
    previous_summary_id  text,
    created_at           timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, summary_id),
    FOREIGN KEY (tenant_id, session_id) REFERENCES sessions (tenant_id, session_id)
);
CREATE INDEX session_summaries_latest
    ON session_summaries (tenant_id, session_id, to_seq DESC, summary_id DESC);

-- The session row: only its head moves, forward; everything it was created with is fixed, since
-- a session_context receipt is replayed from it (task, system prompt, namespace, labels).
CREATE FUNCTION sessions_guard_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.tenant_id, NEW.session_id, NEW.namespace, NEW.task, NEW.system_prompt,
        NEW.budget_tokens, NEW.keep_last, NEW.memory_budget_tokens, NEW.remember_turns,
        NEW.labels, NEW.agent_id, NEW.created_by_key, NEW.idempotency_key, NEW.request_sha256,
        NEW.created_at)
       IS DISTINCT FROM
       (OLD.tenant_id, OLD.session_id, OLD.namespace, OLD.task, OLD.system_prompt,
        OLD.budget_tokens, OLD.keep_last, OLD.memory_budget_tokens, OLD.remember_turns,
        OLD.labels, OLD.agent_id, OLD.created_by_key, OLD.idempotency_key, OLD.request_sha256,
        OLD.created_at)
       OR NEW.turn_count < OLD.turn_count THEN
        RAISE EXCEPTION 'session % is fixed once created; only its history grows', OLD.session_id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER sessions_fixed BEFORE UPDATE ON sessions
    FOR EACH ROW EXECUTE FUNCTION sessions_guard_update();
CREATE TRIGGER sessions_no_delete BEFORE DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER sessions_no_truncate BEFORE TRUNCATE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
ALTER TABLE sessions ENABLE ALWAYS TRIGGER sessions_fixed;
ALTER TABLE sessions ENABLE ALWAYS TRIGGER sessions_no_delete;
ALTER TABLE sessions ENABLE ALWAYS TRIGGER sessions_no_truncate;

-- History and state are append-only (erasure of a turn, when it comes, is a dedicated function
-- like erase_memory()).
CREATE TRIGGER session_turns_append_only BEFORE UPDATE OR DELETE ON session_turns
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER session_turns_no_truncate BEFORE TRUNCATE ON session_turns
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER session_appends_append_only BEFORE UPDATE OR DELETE ON session_appends
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER session_appends_no_truncate BEFORE TRUNCATE ON session_appends
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER session_summaries_append_only BEFORE UPDATE OR DELETE ON session_summaries
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER session_summaries_no_truncate BEFORE TRUNCATE ON session_summaries
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
ALTER TABLE session_turns ENABLE ALWAYS TRIGGER session_turns_append_only;
ALTER TABLE session_turns ENABLE ALWAYS TRIGGER session_turns_no_truncate;
ALTER TABLE session_appends ENABLE ALWAYS TRIGGER session_appends_append_only;
ALTER TABLE session_appends ENABLE ALWAYS TRIGGER session_appends_no_truncate;
ALTER TABLE session_summaries ENABLE ALWAYS TRIGGER session_summaries_append_only;
ALTER TABLE session_summaries ENABLE ALWAYS TRIGGER session_summaries_no_truncate;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT SELECT, INSERT, UPDATE ON sessions TO ctxgw_app;
        GRANT SELECT, INSERT ON session_turns, session_appends, session_summaries TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant on the session tables to ctxgw_app';
END;
$$;
