// Purpose: an owner's records in id order, for the export of an owner (GET
//   /v1/owners/{owner}/export, queries/export/): with tenant and owner equal and the id a
//   range, each index is read from the page's cursor on, in id order, and the read stops at
//   the page's limit: a page costs its own size, not the owner's. Entities need none (their
//   key constraint leads with tenant, owner and name).
// Parameters: none. Columns: none. Idempotent (IF NOT EXISTS).
CREATE INDEX message_export IF NOT EXISTS
FOR (n:Message) ON (n.tenant, n.owner, n.id);

CREATE INDEX episode_export IF NOT EXISTS
FOR (n:Episode) ON (n.tenant, n.owner, n.id);

CREATE INDEX fact_export IF NOT EXISTS
FOR (n:Fact) ON (n.tenant, n.owner, n.id);

CREATE INDEX trace_export IF NOT EXISTS
FOR (n:Trace) ON (n.tenant, n.owner, n.id);

CREATE INDEX step_export IF NOT EXISTS
FOR (n:Step) ON (n.tenant, n.owner, n.id);

CREATE INDEX case_export IF NOT EXISTS
FOR (n:Case) ON (n.tenant, n.owner, n.id);

CREATE INDEX cluster_export IF NOT EXISTS
FOR (n:Cluster) ON (n.tenant, n.owner, n.id);

CREATE INDEX skill_export IF NOT EXISTS
FOR (n:Skill) ON (n.tenant, n.owner, n.id);

CREATE INDEX document_export IF NOT EXISTS
FOR (n:Document) ON (n.tenant, n.owner, n.id);

CREATE INDEX section_export IF NOT EXISTS
FOR (n:Section) ON (n.tenant, n.owner, n.id);

CREATE INDEX topic_export IF NOT EXISTS
FOR (n:Topic) ON (n.tenant, n.owner, n.id);
