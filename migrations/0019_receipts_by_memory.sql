-- "Which agents ever saw memory Y" (receipts listed by memory id, disclosed_ids @> ARRAY[Y]):
-- under the tenant wall the policy's qual runs before any of the query's own that is not
-- LEAKPROOF, and only a leakproof operator may serve as an index condition, so the GIN index on
-- disclosed_ids went unused and the list walked every receipt of the tenant, newest first, until
-- it had a page (or the log ended: a memory few receipts disclosed cost the whole log). Array
-- containment answers whether one array holds the other's elements and reports nothing else
-- about either; over text[] no error depends on a row's values. As for ts_match_vq (migration
-- 0010), marking it so takes a superuser, and pg_proc is per database.
DO $$
BEGIN
    ALTER FUNCTION pg_catalog.arraycontains(anyarray, anyarray) LEAKPROOF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'not a superuser: receipts listed by memory will not use their GIN index under the tenant wall';
END;
$$;
