-- Compile (0009) and the tenant wall with erasure (0010) were written side by side; this joins
-- them. 1. The memories guard knows both: compile's provenance columns are as immutable as
-- content, its decision is set once, and an erasure blanks the stated value with the text.
-- 2. Erasing a memory or a turn erases the compiled facts derived from it (their sources name it).
-- 3. The compile worker finds open jobs across tenants through one narrow function, as the
-- checkpointer finds new receipts (0010), then claims a job inside that job's tenant wall.

CREATE OR REPLACE FUNCTION memories_guard_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('ctxgw.erasing', true) = OLD.tenant_id || '/' || OLD.memory_id THEN
        IF OLD.erased_at IS NULL AND NEW.erased_at IS NOT NULL AND NEW.heading = ''
           AND NEW.content = '' AND NEW.embedding IS NULL
           AND NEW.claim_value IS NULL AND NEW.claim_previous IS NULL
           AND (NEW.tenant_id, NEW.memory_id, NEW.namespace, NEW.memory_type, NEW.confidence,
                NEW.labels, NEW.source_type, NEW.source_ref, NEW.claim_key, NEW.supersedes,
                NEW.superseded_by, NEW.agent_id, NEW.written_by_key, NEW.idempotency_key,
                NEW.request_sha256, NEW.created_at, NEW.expires_at, NEW.deleted_at,
                NEW.deleted_reason, NEW.content_sha256, NEW.heading_tokens, NEW.tokens,
                NEW.embedding_model, NEW.embedding_dim, NEW.sources, NEW.extractor,
                NEW.valid_from, NEW.superseded_decision)
               IS NOT DISTINCT FROM
               (OLD.tenant_id, OLD.memory_id, OLD.namespace, OLD.memory_type, OLD.confidence,
                OLD.labels, OLD.source_type, OLD.source_ref, OLD.claim_key, OLD.supersedes,
                OLD.superseded_by, OLD.agent_id, OLD.written_by_key, OLD.idempotency_key,
                OLD.request_sha256, OLD.created_at, OLD.expires_at, OLD.deleted_at,
                OLD.deleted_reason, OLD.content_sha256, OLD.heading_tokens, OLD.tokens,
                OLD.embedding_model, OLD.embedding_dim, OLD.sources, OLD.extractor,
                OLD.valid_from, OLD.superseded_decision) THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'an erasure of memory % blanks its text and nothing else', OLD.memory_id
            USING ERRCODE = 'check_violation';
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

-- Erase one memory version at p_at, and every compiled fact whose sources name it (each in
-- turn erases the facts derived from it); no_data_found when there is none left to erase.
-- Every version erased gets its row in `erasures`.
CREATE OR REPLACE FUNCTION erase_memory(p_tenant text, p_memory text, p_reason text, p_at timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_fact text;
BEGIN
    PERFORM set_config('ctxgw.erasing', p_tenant || '/' || p_memory, true);
    UPDATE memories SET heading = '', content = '', embedding = NULL, claim_value = NULL,
                        claim_previous = NULL, erased_at = p_at
     WHERE tenant_id = p_tenant AND memory_id = p_memory AND erased_at IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'memory %/% not found or already erased', p_tenant, p_memory
            USING ERRCODE = 'no_data_found';
    END IF;
    INSERT INTO erasures (tenant_id, memory_id, erased_at, reason)
    VALUES (p_tenant, p_memory, p_at, p_reason);
    PERFORM set_config('ctxgw.erasing', '', true);
    FOR v_fact IN
        SELECT memory_id FROM memories
         WHERE tenant_id = p_tenant AND sources @> ARRAY[p_memory] AND erased_at IS NULL
         ORDER BY memory_id
    LOOP
        -- (one erased earlier in this loop, as derived from another, is passed over)
        IF EXISTS (SELECT 1 FROM memories WHERE tenant_id = p_tenant AND memory_id = v_fact
                                            AND erased_at IS NULL) THEN
            PERFORM erase_memory(p_tenant, v_fact, p_reason, p_at);
        END IF;
    END LOOP;
END;
$$;

-- Erase one turn (0010), and also the compiled facts whose sources name the turn itself (a
-- session compiled without remember_turns has no memory of the turn in between).
CREATE OR REPLACE FUNCTION erase_turn(
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
                OR source_type = 'summary' AND source_ref = ANY(v_summaries)
                OR sources @> ARRAY[v_turn])
         ORDER BY memory_id
    LOOP
        -- A fact compiled from the remembered turn went with that memory already.
        IF EXISTS (SELECT 1 FROM memories WHERE tenant_id = p_tenant AND memory_id = v_memory
                                            AND erased_at IS NULL) THEN
            PERFORM erase_memory(p_tenant, v_memory, p_reason, p_at);
            erased_kind := 'memory'; erased_id := v_memory;
            RETURN NEXT;
        END IF;
    END LOOP;
END;
$$;

-- The tenants with a compile job to run now: pending, or running with a silent heartbeat.
CREATE FUNCTION compile_tenants(p_stale_before timestamptz) RETURNS TABLE (tenant_id text)
LANGUAGE sql STABLE SECURITY DEFINER AS $$
    SELECT DISTINCT j.tenant_id FROM compile_jobs j
     WHERE j.status = 'pending' OR (j.status = 'running' AND j.heartbeat_at < p_stale_before)
     ORDER BY j.tenant_id
$$;

DO $$
DECLARE
    s text := quote_ident(current_schema());
BEGIN
    EXECUTE format('ALTER FUNCTION compile_tenants(timestamptz) SET search_path = %s, pg_temp', s);
    REVOKE ALL ON FUNCTION compile_tenants(timestamptz) FROM PUBLIC;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_ledger') THEN
        RETURN;
    END IF;
    GRANT SELECT ON compile_jobs TO ctxgw_ledger;
    CREATE POLICY ledger_reads ON compile_jobs FOR SELECT TO ctxgw_ledger USING (true);
    ALTER FUNCTION compile_tenants(timestamptz) OWNER TO ctxgw_ledger;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT EXECUTE ON FUNCTION compile_tenants(timestamptz) TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot hand compile_tenants to ctxgw_ledger';
END;
$$;
