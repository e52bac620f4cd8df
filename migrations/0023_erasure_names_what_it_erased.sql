-- Erasure answers every version it blanked, the compiled facts derived from it included, so the
-- signed `erasure` receipt names them all (ARCHITECTURE §14). Before, erase_memory() answered
-- nothing and erase_turn() the memories remembered from the turn, while the facts erased with
-- them had only their rows in `erasures`. What is blanked, and how, is unchanged (0013).
DROP FUNCTION erase_turn(text, text, bigint, text, timestamptz);
DROP FUNCTION erase_memory(text, text, text, timestamptz);

-- Erase one memory version at p_at and the facts whose sources name it: their ids, the asked-for
-- one first, then the derived ones in id order (each after what was derived from it in turn);
-- no_data_found when there is none left to erase.
CREATE FUNCTION erase_memory(p_tenant text, p_memory text, p_reason text, p_at timestamptz)
RETURNS SETOF text LANGUAGE plpgsql AS $$
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
    RETURN NEXT p_memory;
    FOR v_fact IN
        SELECT memory_id FROM memories
         WHERE tenant_id = p_tenant AND sources @> ARRAY[p_memory] AND erased_at IS NULL
         ORDER BY memory_id
    LOOP
        -- (one erased earlier in this loop, as derived from another, is passed over)
        IF EXISTS (SELECT 1 FROM memories WHERE tenant_id = p_tenant AND memory_id = v_fact
                                            AND erased_at IS NULL) THEN
            RETURN QUERY SELECT * FROM erase_memory(p_tenant, v_fact, p_reason, p_at);
        END IF;
    END LOOP;
END;
$$;

-- Erase one turn (0013), answering every memory it blanked: the remembered copies of the turn
-- and of its summaries, and every fact derived from them or from the turn itself.
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
                OR source_type = 'summary' AND source_ref = ANY(v_summaries)
                OR sources @> ARRAY[v_turn])
         ORDER BY memory_id
    LOOP
        -- A fact compiled from the remembered turn went with that memory already.
        IF EXISTS (SELECT 1 FROM memories WHERE tenant_id = p_tenant AND memory_id = v_memory
                                            AND erased_at IS NULL) THEN
            erased_kind := 'memory';
            FOR erased_id IN SELECT * FROM erase_memory(p_tenant, v_memory, p_reason, p_at) LOOP
                RETURN NEXT;
            END LOOP;
        END IF;
    END LOOP;
END;
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT EXECUTE ON FUNCTION erase_memory(text, text, text, timestamptz),
            erase_turn(text, text, bigint, text, timestamptz) TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant erasure to ctxgw_app';
END;
$$;
