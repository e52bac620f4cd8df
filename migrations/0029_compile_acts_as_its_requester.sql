-- A compile job acts for the key that asked, as that key (ARCHITECTURE §12, §14): it reads only
-- the episodes the policy in force lets its requester see, and an admin's key sees what an
-- agent's may not. The job ran as an agent whatever the key's role, since the row did not say
-- it; now it records the role the request was made with (a key's role never changes). Jobs
-- queued before this migration keep running as agents, as they always did.
ALTER TABLE compile_jobs
    ADD COLUMN requested_role text NOT NULL DEFAULT 'agent'
        CHECK (requested_role IN ('agent', 'admin'));
