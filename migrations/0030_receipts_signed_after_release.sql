-- The serial section of a tenant's log (ARCHITECTURE §8) holds only what orders the log: the
-- lock of its head, each receipt's body at its position (`seq`, `prev` in the signed bytes) and
-- the head's advance. What is computed from a body once it is placed no longer waits in it:
--
-- * its signatures (`receipt_signatures`), made after the log is released and stored in the
--   durable transaction that ends every append before any request is answered
--   (`gateway.usecases.receiptlog.group_commit`). Signing is deterministic (Ed25519, HMAC), so a
--   receipt a crash left unsigned is signed by the checkpointer before a checkpoint covers it;
-- * its rows in `receipt_disclosures`, written by the same transaction from the body's
--   `disclosed_ids` (and repaired with the signatures);
-- * the GIN index on `receipts.disclosed_ids`, which no query reads since migration 0019.
CREATE TABLE receipt_signatures (
    tenant_id  text NOT NULL,
    seq        bigint NOT NULL,
    envelope   jsonb NOT NULL,   -- the DSSE envelope without its payload, which is the body
    PRIMARY KEY (tenant_id, seq)   -- no foreign key, as receipt_disclosures: append-only both
);
CREATE TRIGGER receipt_signatures_append_only BEFORE UPDATE OR DELETE ON receipt_signatures
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER receipt_signatures_no_truncate BEFORE TRUNCATE ON receipt_signatures
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
ALTER TABLE receipt_signatures ENABLE ALWAYS TRIGGER receipt_signatures_append_only;
ALTER TABLE receipt_signatures ENABLE ALWAYS TRIGGER receipt_signatures_no_truncate;

-- Every tenant's envelopes move: the owner is not subject to the tenant wall while it is not
-- forced, so a migration run by an administrator who is not a superuser moves them all too.
ALTER TABLE receipts NO FORCE ROW LEVEL SECURITY;
INSERT INTO receipt_signatures (tenant_id, seq, envelope)
SELECT tenant_id, seq, envelope FROM receipts;
ALTER TABLE receipts FORCE ROW LEVEL SECURITY;
ALTER TABLE receipts DROP COLUMN envelope;

DROP TRIGGER receipts_disclosures ON receipts;
DROP FUNCTION receipt_disclosures_insert();
DROP INDEX receipts_disclosed;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT SELECT, INSERT ON receipt_signatures TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant on receipt_signatures';
END;
$$;
