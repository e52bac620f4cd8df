-- Tiles of the receipt log's Merkle tree: tile j is the root of receipts j*256+1 .. (j+1)*256
-- (receipts.merkle.TILE_SIZE leaves). An inclusion proof then reads the tiles and two tiles of
-- leaves instead of the whole log (receipts.tiled_inclusion_proof). Derived from the leaves, so
-- they are written once, when a proof or a checkpoint first needs them, and never changed.
CREATE TABLE receipt_tiles (
    tenant_id  text NOT NULL REFERENCES tenants (tenant_id),
    tile       bigint NOT NULL CHECK (tile >= 0),
    hash       bytea NOT NULL CHECK (octet_length(hash) = 32),
    PRIMARY KEY (tenant_id, tile)
);

CREATE TRIGGER receipt_tiles_append_only BEFORE UPDATE OR DELETE ON receipt_tiles
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER receipt_tiles_no_truncate BEFORE TRUNCATE ON receipt_tiles
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
ALTER TABLE receipt_tiles ENABLE ALWAYS TRIGGER receipt_tiles_append_only;
ALTER TABLE receipt_tiles ENABLE ALWAYS TRIGGER receipt_tiles_no_truncate;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT SELECT, INSERT ON receipt_tiles TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant on receipt_tiles to ctxgw_app';
END;
$$;
