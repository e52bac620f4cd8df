-- Row-level security: a second wall between tenants (ARCHITECTURE §14), beside the tenant_id
-- every query already names. Every table with a tenant_id column gets one policy, FORCE'd (so the
-- tables' owner is held too, superusers aside): a row is visible and writable only while the
-- transaction's ctxgw.tenant setting names its tenant. A transaction that set none sees nothing
-- (current_setting(…, true) is NULL, or '' once set and reverted, and matches no tenant).
--
-- The tenant is set with set_config(…, true), i.e. SET LOCAL, by enter_tenant() below, in the
-- same round trip as what it guards (gateway.store.database: with a request's BEGIN, and with
-- the key lookup that runs on its own before it), and by background work for the one tenant it
-- handles. The wall holds against a query that forgets its tenant filter; a session that may run
-- arbitrary SQL may also call set_config, which is what the grants and the login role are for.

CREATE FUNCTION enter_tenant(p_tenant text) RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT set_config('ctxgw.tenant', p_tenant, true)
$$;

-- Walls every tenant table not walled yet, and answers their names. Migrations that come later
-- create tables too: the migrator calls this after every run that applied one, so a table with
-- a tenant_id is never left outside (tests/gateway/test_tenant_wall.py checks them all).
CREATE FUNCTION wall_tenant_tables() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    t regclass;
BEGIN
    FOR t IN
        SELECT c.oid::regclass
          FROM pg_class c
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
         WHERE c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace
           AND NOT (c.relrowsecurity AND c.relforcerowsecurity
                    AND EXISTS (SELECT 1 FROM pg_policy p
                                 WHERE p.polrelid = c.oid AND p.polname = 'tenant_wall'))
         ORDER BY c.relname
    LOOP
        EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', t);
        IF NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = t AND p.polname = 'tenant_wall') THEN
            EXECUTE format(
                'CREATE POLICY tenant_wall ON %s'
                ' USING (tenant_id = current_setting(''ctxgw.tenant'', true))'
                ' WITH CHECK (tenant_id = current_setting(''ctxgw.tenant'', true))', t);
        END IF;
        RETURN NEXT t::text;
    END LOOP;
END;
$$;

SELECT wall_tenant_tables();


-- A policy's qual runs before any of the query's own that is not LEAKPROOF, and only a leakproof
-- operator may then serve as an index condition: without this, full-text recall (tsv @@ query)
-- could not use the GIN index and would scan every memory of the tenant (measured: recall 3.5x
-- slower at 3k memories). ts_match_vq answers whether a document matches a query and reports
-- nothing else about either (no error depends on the row); marking it so takes a superuser, and
-- pg_proc is per database, so this database alone is changed.
DO $$
BEGIN
    ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'not a superuser: full-text recall will not use its GIN index under the tenant wall';
END;
$$;

-- Cross-tenant background work has one narrow, auditable path: ctxgw_ledger (NOLOGIN) may read
-- the log heads, checkpoints and receipts of every tenant, and only through the two functions it
-- owns below (SECURITY DEFINER), which answer tenant ids and counts, never a receipt. The
-- checkpointer then enters each tenant it found (enter_tenant) to checkpoint it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_ledger') THEN
        CREATE ROLE ctxgw_ledger NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot create role ctxgw_ledger; the checkpointer will see no tenant';
END;
$$;

CREATE FUNCTION ledger_growth() RETURNS TABLE (tenant_id text, size bigint)
LANGUAGE sql STABLE SECURITY DEFINER AS $$
    SELECT l.tenant_id, l.size FROM receipt_logs l
     WHERE l.size > COALESCE((SELECT max(c.size) FROM checkpoints c
                               WHERE c.tenant_id = l.tenant_id), 0)
     ORDER BY l.tenant_id
$$;

-- Receipts past their tenant's latest checkpoint, and the age of the oldest of them (0 when
-- none): what an auditor fetching a proof now would wait for.
CREATE FUNCTION ledger_lag() RETURNS TABLE (behind bigint, seconds float8)
LANGUAGE sql STABLE SECURITY DEFINER AS $$
    SELECT count(*), COALESCE(EXTRACT(EPOCH FROM (now() - min(r.issued_at))), 0)::float8
      FROM receipts r
     WHERE r.seq > COALESCE((SELECT max(c.size) FROM checkpoints c
                              WHERE c.tenant_id = r.tenant_id), 0)
$$;

DO $$
DECLARE
    s text := quote_ident(current_schema());
BEGIN
    EXECUTE format('ALTER FUNCTION ledger_growth() SET search_path = %s, pg_temp', s);
    EXECUTE format('ALTER FUNCTION ledger_lag() SET search_path = %s, pg_temp', s);
    REVOKE ALL ON FUNCTION ledger_growth(), ledger_lag() FROM PUBLIC;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_ledger') THEN
        RETURN;
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %s TO ctxgw_ledger', s);
    GRANT SELECT ON receipt_logs, checkpoints, receipts TO ctxgw_ledger;
    CREATE POLICY ledger_reads ON receipt_logs FOR SELECT TO ctxgw_ledger USING (true);
    CREATE POLICY ledger_reads ON checkpoints FOR SELECT TO ctxgw_ledger USING (true);
    CREATE POLICY ledger_reads ON receipts FOR SELECT TO ctxgw_ledger USING (true);
    ALTER FUNCTION ledger_growth() OWNER TO ctxgw_ledger;
    ALTER FUNCTION ledger_lag() OWNER TO ctxgw_ledger;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT EXECUTE ON FUNCTION ledger_growth(), ledger_lag() TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot hand the ledger functions to ctxgw_ledger';
END;
$$;

-- Erasure (ARCHITECTURE §14): the one change an immutable version, a turn or a summary admits.
-- Its text goes (heading and content, hence the generated full-text vector; the embedding); its
-- hashes, token counts and place stay, so every receipt that disclosed it still verifies and an
-- exact replay can say precisely that it was erased. The guards allow exactly that change, and
-- only inside erase_memory() / erase_turn(), which name the row in ctxgw.erasing.
ALTER TABLE memories DROP CONSTRAINT memories_heading_check;
ALTER TABLE memories ADD CONSTRAINT memories_heading_check
    CHECK (char_length(heading) BETWEEN 1 AND 200 OR (erased_at IS NOT NULL AND heading = ''));
ALTER TABLE session_turns ADD COLUMN erased_at timestamptz;
ALTER TABLE session_summaries ADD COLUMN erased_at timestamptz;

CREATE OR REPLACE FUNCTION memories_guard_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('ctxgw.erasing', true) = OLD.tenant_id || '/' || OLD.memory_id THEN
        IF OLD.erased_at IS NULL AND NEW.erased_at IS NOT NULL AND NEW.heading = ''
           AND NEW.content = '' AND NEW.embedding IS NULL
           AND (NEW.tenant_id, NEW.memory_id, NEW.namespace, NEW.memory_type, NEW.confidence,
                NEW.labels, NEW.source_type, NEW.source_ref, NEW.claim_key, NEW.supersedes,
                NEW.superseded_by, NEW.agent_id, NEW.written_by_key, NEW.idempotency_key,
                NEW.request_sha256, NEW.created_at, NEW.expires_at, NEW.deleted_at,
                NEW.deleted_reason, NEW.content_sha256, NEW.heading_tokens, NEW.tokens,
                NEW.embedding_model, NEW.embedding_dim)
               IS NOT DISTINCT FROM
               (OLD.tenant_id, OLD.memory_id, OLD.namespace, OLD.memory_type, OLD.confidence,
                OLD.labels, OLD.source_type, OLD.source_ref, OLD.claim_key, OLD.supersedes,
                OLD.superseded_by, OLD.agent_id, OLD.written_by_key, OLD.idempotency_key,
                OLD.request_sha256, OLD.created_at, OLD.expires_at, OLD.deleted_at,
                OLD.deleted_reason, OLD.content_sha256, OLD.heading_tokens, OLD.tokens,
                OLD.embedding_model, OLD.embedding_dim) THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'an erasure of memory % blanks its text and nothing else', OLD.memory_id
            USING ERRCODE = 'check_violation';
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

-- A turn or a summary of the session being erased: only its text blanked and erased_at set.
CREATE FUNCTION session_text_guard_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_rest jsonb := to_jsonb(OLD) - 'content' - 'text' - 'erased_at';
    new_rest jsonb := to_jsonb(NEW) - 'content' - 'text' - 'erased_at';
    new_text text := coalesce(to_jsonb(NEW) ->> 'content', to_jsonb(NEW) ->> 'text');
BEGIN
    IF current_setting('ctxgw.erasing', true) = 'session:' || OLD.tenant_id || '/' || OLD.session_id
       AND OLD.erased_at IS NULL AND NEW.erased_at IS NOT NULL AND new_text = ''
       AND new_rest = old_rest THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION '% is append-only (erase_turn() alone blanks a text)', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

DROP TRIGGER session_turns_append_only ON session_turns;
DROP TRIGGER session_summaries_append_only ON session_summaries;
CREATE TRIGGER session_turns_no_delete BEFORE DELETE ON session_turns
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER session_turns_erasure_only BEFORE UPDATE ON session_turns
    FOR EACH ROW EXECUTE FUNCTION session_text_guard_update();
CREATE TRIGGER session_summaries_no_delete BEFORE DELETE ON session_summaries
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER session_summaries_erasure_only BEFORE UPDATE ON session_summaries
    FOR EACH ROW EXECUTE FUNCTION session_text_guard_update();
ALTER TABLE session_turns ENABLE ALWAYS TRIGGER session_turns_no_delete;
ALTER TABLE session_turns ENABLE ALWAYS TRIGGER session_turns_erasure_only;
ALTER TABLE session_summaries ENABLE ALWAYS TRIGGER session_summaries_no_delete;
ALTER TABLE session_summaries ENABLE ALWAYS TRIGGER session_summaries_erasure_only;

-- Erase one memory version at p_at; no_data_found when there is none left to erase.
DROP FUNCTION erase_memory(text, text, text);
CREATE FUNCTION erase_memory(p_tenant text, p_memory text, p_reason text, p_at timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('ctxgw.erasing', p_tenant || '/' || p_memory, true);
    UPDATE memories SET heading = '', content = '', embedding = NULL, erased_at = p_at
     WHERE tenant_id = p_tenant AND memory_id = p_memory AND erased_at IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'memory %/% not found or already erased', p_tenant, p_memory
            USING ERRCODE = 'no_data_found';
    END IF;
    INSERT INTO erasures (tenant_id, memory_id, erased_at, reason)
    VALUES (p_tenant, p_memory, p_at, p_reason);
    -- Compiled facts (ARCHITECTURE §12) derived from this memory are erased here as well, once
    -- the compile tables exist beside it: any fact whose sources name p_memory.
    PERFORM set_config('ctxgw.erasing', '', true);
END;
$$;

-- Erase one turn at p_at, with everything derived from its text: the session's summaries that
-- cover it (each summary folds the previous one, so every later one too) and the memories
-- remembered from the turn or from those summaries. Answers what it erased, turn first.
CREATE FUNCTION erase_turn(
    p_tenant text, p_session text, p_seq bigint, p_reason text, p_at timestamptz
) RETURNS TABLE (erased_kind text, erased_id text) LANGUAGE plpgsql AS $$
DECLARE
    v_turn text;
    v_summaries text[];
    v_memory text;
BEGIN
    PERFORM set_config('ctxgw.erasing', 'session:' || p_tenant || '/' || p_session, true);
    UPDATE session_turns SET content = '', erased_at = p_at
     WHERE tenant_id = p_tenant AND session_id = p_session AND seq = p_seq AND erased_at IS NULL
    RETURNING turn_id INTO v_turn;
    IF v_turn IS NULL THEN
        RAISE EXCEPTION 'turn %/%/% not found or already erased', p_tenant, p_session, p_seq
            USING ERRCODE = 'no_data_found';
    END IF;
    erased_kind := 'turn'; erased_id := v_turn;
    RETURN NEXT;
    WITH blanked AS (
        UPDATE session_summaries SET text = '', erased_at = p_at
         WHERE tenant_id = p_tenant AND session_id = p_session AND to_seq >= p_seq
           AND erased_at IS NULL
        RETURNING summary_id)
    SELECT coalesce(array_agg(summary_id ORDER BY summary_id), '{}') INTO v_summaries FROM blanked;
    FOR erased_id IN SELECT unnest(v_summaries) LOOP
        erased_kind := 'summary';
        RETURN NEXT;
    END LOOP;
    PERFORM set_config('ctxgw.erasing', '', true);
    FOR v_memory IN
        SELECT memory_id FROM memories
         WHERE tenant_id = p_tenant AND erased_at IS NULL
           AND (source_type = 'turn' AND source_ref = v_turn
                OR source_type = 'summary' AND source_ref = ANY(v_summaries))
         ORDER BY memory_id
    LOOP
        PERFORM erase_memory(p_tenant, v_memory, p_reason, p_at);
        erased_kind := 'memory'; erased_id := v_memory;
        RETURN NEXT;
    END LOOP;
END;
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT EXECUTE ON FUNCTION erase_memory(text, text, text, timestamptz),
            erase_turn(text, text, bigint, text, timestamptz) TO ctxgw_app;
        GRANT UPDATE (content, erased_at) ON session_turns TO ctxgw_app;
        GRANT UPDATE (text, erased_at) ON session_summaries TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant erasure to ctxgw_app';
END;
$$;
