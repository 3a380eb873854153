// Purpose: the job queue (:Job nodes; see graphmem/jobs.py). A job's id is unique per tenant;
//   `slot` (kind and key hashed) is set only while a job is pending and not yet claimed, so its
//   uniqueness makes "one pending job per kind+key" hold under concurrent enqueues. Claiming reads
//   pending jobs by (state, kind, run_after) and crashed workers' jobs by (state, kind,
//   lease_until), oldest first straight from the index, however long the backlog. Retention
//   finds old done jobs by (state, done_at).
// Parameters: none. Columns: none. Idempotent (IF NOT EXISTS).
CREATE CONSTRAINT job_key IF NOT EXISTS
FOR (j:Job) REQUIRE (j.tenant, j.id) IS UNIQUE;

CREATE CONSTRAINT job_slot IF NOT EXISTS
FOR (j:Job) REQUIRE (j.tenant, j.slot) IS UNIQUE;

CREATE INDEX job_pending IF NOT EXISTS
FOR (j:Job) ON (j.state, j.kind, j.run_after);

CREATE INDEX job_leased IF NOT EXISTS
FOR (j:Job) ON (j.state, j.kind, j.lease_until);

CREATE INDEX job_tenant_state IF NOT EXISTS
FOR (j:Job) ON (j.tenant, j.state);

CREATE INDEX job_kind_key IF NOT EXISTS
FOR (j:Job) ON (j.tenant, j.kind, j.key);

CREATE INDEX job_owner IF NOT EXISTS
FOR (j:Job) ON (j.tenant, j.owner);

CREATE INDEX job_done IF NOT EXISTS
FOR (j:Job) ON (j.state, j.done_at);
