-- Full-text recall finds its matches in the scope's namespaces, not in the whole tenant. The GIN
-- index on memories.tsv answers `tsv @@ query` for every memory of every tenant, and the scope
-- was checked on the rows it returned: a session's namespace of 500 turns in a tenant of 100,000
-- memories read every tenant-wide match of each query term to keep the few in its namespace.
-- `scope_key` holds one lexeme, `<tenant_id>/<namespace>` (a tenant id has no '/', so the key
-- names one namespace of one tenant), and the index covers it beside tsv: `scope_key @@ 'key'`
-- is then a second condition of the same index scan, which intersects the query's posting lists
-- with the namespace's. It has to be a tsvector match: under the tenant wall (row-level security)
-- only a leakproof operator may be an index condition, and ts_match_vq is one (migration 0010),
-- where an array overlap is not. A query over every namespace uses the tsv column alone.
ALTER TABLE memories ADD COLUMN scope_key tsvector
    GENERATED ALWAYS AS (array_to_tsvector(ARRAY[tenant_id || '/' || namespace])) STORED;
DROP INDEX memories_tsv;
CREATE INDEX memories_tsv ON memories USING gin (tsv, scope_key) WITH (gin_pending_list_limit = 64);
