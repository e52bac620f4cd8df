-- How far a compile job is (ARCHITECTURE §12): the episodes it has read, moved with each chunk's
-- heartbeat, and the episodes its scope held past the watermark when it started running (NULL
-- while it waits for a worker). A scope too large to compile within one request is queued and
-- polled (`gateway.usecases.compiling.jobs`); these two say how far it has come.
ALTER TABLE compile_jobs
    ADD COLUMN episodes_read bigint NOT NULL DEFAULT 0 CHECK (episodes_read >= 0),
    ADD COLUMN episodes_total bigint CHECK (episodes_total >= 0);
