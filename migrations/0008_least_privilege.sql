-- The gateway logs in as ctxgw_app itself (ARCHITECTURE §14): a role that is neither superuser
-- nor BYPASSRLS, so no RESET ROLE can widen what a request's session may do. The embedded server
-- lets it log in over its private socket; against an external server the operator gives it a
-- password (or logs in as another such role that is a member of ctxgw_app).
--
-- And only the grants each table needs. API keys: the gateway issues them (INSERT) and revokes
-- them (revoked_at); it never changes a key's role, tenant, namespaces or secret, so a session
-- that runs arbitrary SQL cannot promote an agent key to admin. Tenants are only inserted.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        RAISE NOTICE 'no role ctxgw_app; the gateway will refuse a superuser login all the same';
        RETURN;
    END IF;
    BEGIN
        ALTER ROLE ctxgw_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'cannot let ctxgw_app log in; grant it LOGIN, or log in as a member of it';
    END;
    REVOKE UPDATE ON api_keys, tenants FROM ctxgw_app;
    GRANT UPDATE (revoked_at) ON api_keys TO ctxgw_app;
END $$;
