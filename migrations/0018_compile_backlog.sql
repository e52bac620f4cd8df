-- What an operator watches of compilation (ARCHITECTURE §14): the jobs of every tenant by
-- status, how long the oldest open one has waited, how many running ones have a silent
-- heartbeat (a worker died; another will reclaim them), and what the jobs wrote. Read at scrape
-- time across the tenant wall, hence a function owned by the ledger role, as ledger_lag() is.
CREATE FUNCTION compile_backlog(p_stale_before timestamptz)
RETURNS TABLE (status text, jobs bigint, oldest_seconds float8, stalled bigint, created bigint,
               superseded bigint, conflicts bigint, skipped bigint)
LANGUAGE sql STABLE SECURITY DEFINER AS $$
    SELECT j.status, count(*),
           COALESCE(EXTRACT(EPOCH FROM (now() - min(j.requested_at))), 0)::float8,
           count(*) FILTER (WHERE j.status = 'running' AND j.heartbeat_at < p_stale_before),
           sum(j.created), sum(j.superseded), sum(j.conflicts), sum(j.skipped)
      FROM compile_jobs j
     GROUP BY j.status
     ORDER BY j.status
$$;

DO $$
DECLARE
    s text := quote_ident(current_schema());
BEGIN
    EXECUTE format('ALTER FUNCTION compile_backlog(timestamptz) SET search_path = %s, pg_temp', s);
    REVOKE ALL ON FUNCTION compile_backlog(timestamptz) FROM PUBLIC;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_ledger') THEN
        RETURN;
    END IF;
    ALTER FUNCTION compile_backlog(timestamptz) OWNER TO ctxgw_ledger;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT EXECUTE ON FUNCTION compile_backlog(timestamptz) TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot hand compile_backlog to ctxgw_ledger';
END;
$$;
