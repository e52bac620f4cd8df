-- "Which agents ever saw memory Y": receipts listed by memory id, in log order, a page at a time.
-- The GIN index on disclosed_ids answers which receipts hold Y, but in no order: a memory that
-- every receipt disclosed had all of them read and sorted for one page, and a planner that
-- walked the log instead, for a memory one receipt disclosed, read the whole log (under the
-- tenant wall array containment is not even an index condition). One row per (receipt, memory)
-- disclosed, indexed in log order, answers either with a page's worth of index reads.
CREATE TABLE receipt_disclosures (
    tenant_id  text NOT NULL,
    memory_id  text NOT NULL,
    seq        bigint NOT NULL,
    PRIMARY KEY (tenant_id, memory_id, seq)
);

-- Written by the receipt's own insert, from its own (signed, index-checked) disclosed_ids, so the
-- two cannot disagree; receipts are append-only, and so is this.
CREATE FUNCTION receipt_disclosures_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO receipt_disclosures (tenant_id, memory_id, seq)
    SELECT NEW.tenant_id, m, NEW.seq FROM unnest(NEW.disclosed_ids) AS m;
    RETURN NULL;
END;
$$;
CREATE TRIGGER receipts_disclosures AFTER INSERT ON receipts
    FOR EACH ROW WHEN (cardinality(NEW.disclosed_ids) > 0)
    EXECUTE FUNCTION receipt_disclosures_insert();
CREATE TRIGGER receipt_disclosures_append_only BEFORE UPDATE OR DELETE ON receipt_disclosures
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER receipt_disclosures_no_truncate BEFORE TRUNCATE ON receipt_disclosures
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
ALTER TABLE receipt_disclosures ENABLE ALWAYS TRIGGER receipt_disclosures_append_only;
ALTER TABLE receipt_disclosures ENABLE ALWAYS TRIGGER receipt_disclosures_no_truncate;

INSERT INTO receipt_disclosures (tenant_id, memory_id, seq)
SELECT DISTINCT r.tenant_id, m, r.seq FROM receipts r, unnest(r.disclosed_ids) AS m;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctxgw_app') THEN
        GRANT SELECT, INSERT ON receipt_disclosures TO ctxgw_app;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant on receipt_disclosures to ctxgw_app';
END;
$$;
