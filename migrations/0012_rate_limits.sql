-- Per-key rate limits and write quotas (ARCHITECTURE §14): token buckets in PostgreSQL, so that
-- every worker and replica draws on the same budget.
--
-- A key's limits are its own columns (NULL: unlimited), set when the key is issued
-- (`ctxgw keys create --requests-per-second N --writes-per-second N`). `requests` counts every
-- authenticated request, `writes` every memory or session turn written (a batch of 100 is 100).
ALTER TABLE api_keys
    ADD COLUMN requests_per_second real DEFAULT 200 CHECK (requests_per_second > 0),
    ADD COLUMN writes_per_second   real DEFAULT 500 CHECK (writes_per_second > 0);

-- The buckets: a key's level and when it was last charged. The key lookup charges them in the
-- same statement (gateway.store.keys), as its own transaction before the request's, so a bucket
-- row is locked for one statement, never for a whole request. UNLOGGED: a bucket is not worth
-- a WAL flush per request, and after a crash every bucket simply starts full again.
CREATE UNLOGGED TABLE rate_buckets (
    tenant_id   text NOT NULL,
    key_id      text NOT NULL,
    bucket      text NOT NULL CHECK (bucket IN ('requests', 'writes')),
    rate        double precision NOT NULL,   -- tokens per second, as the key said when charged
    capacity    double precision NOT NULL,   -- the burst: the most tokens the bucket holds
    asked       double precision NOT NULL,   -- what the last request asked for
    granted     boolean NOT NULL,            -- whether it got them
    tokens      double precision NOT NULL,   -- the level after it
    charged_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, key_id, bucket)
);

-- The level of a bucket at `now`: what it held, refilled at `rate` since, up to `capacity`.
CREATE FUNCTION bucket_level(tokens double precision, since timestamptz, now timestamptz,
                             rate double precision, capacity double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT least(capacity, tokens + greatest(0, extract(epoch FROM now - since)) * rate)
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT SELECT, INSERT, UPDATE ON rate_buckets TO ctxgw_app;
        GRANT EXECUTE ON FUNCTION bucket_level(double precision, timestamptz, timestamptz,
                                               double precision, double precision) TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant on rate_buckets to ctxgw_app';
END;
$$;
