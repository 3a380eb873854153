// Purpose: procedural memory (see graphmem/procedural/): traces and their steps (ground truth),
//   cases formed from them, clusters of cases, and skills. Ids are unique per tenant. The recall
//   indexes: case_vector / skill_vector are in schema/vector/; case_fulltext and skill_fulltext
//   are in 09_fulltext_scope.
// Parameters: none. Columns: none. Idempotent.
CREATE CONSTRAINT trace_key IF NOT EXISTS
FOR (t:Trace) REQUIRE (t.tenant, t.id) IS UNIQUE;

CREATE CONSTRAINT step_key IF NOT EXISTS
FOR (s:Step) REQUIRE (s.tenant, s.id) IS UNIQUE;

CREATE CONSTRAINT case_key IF NOT EXISTS
FOR (c:Case) REQUIRE (c.tenant, c.id) IS UNIQUE;

CREATE CONSTRAINT cluster_key IF NOT EXISTS
FOR (c:Cluster) REQUIRE (c.tenant, c.id) IS UNIQUE;

CREATE CONSTRAINT skill_key IF NOT EXISTS
FOR (s:Skill) REQUIRE (s.tenant, s.id) IS UNIQUE;

CREATE CONSTRAINT procedural_lock_key IF NOT EXISTS
FOR (l:ProceduralLock) REQUIRE (l.tenant, l.owner) IS UNIQUE;

CREATE INDEX trace_owner IF NOT EXISTS
FOR (t:Trace) ON (t.tenant, t.owner, t.started_at);

CREATE INDEX step_owner IF NOT EXISTS
FOR (s:Step) ON (s.tenant, s.owner);

CREATE INDEX case_owner IF NOT EXISTS
FOR (c:Case) ON (c.tenant, c.owner, c.occurred_at);

CREATE INDEX case_trace IF NOT EXISTS
FOR (c:Case) ON (c.tenant, c.trace_id);

CREATE INDEX cluster_owner IF NOT EXISTS
FOR (c:Cluster) ON (c.tenant, c.owner);

CREATE INDEX skill_owner IF NOT EXISTS
FOR (s:Skill) ON (s.tenant, s.owner, s.valid_from);

CREATE INDEX skill_lineage IF NOT EXISTS
FOR (s:Skill) ON (s.tenant, s.lineage);
