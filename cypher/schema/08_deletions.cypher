// Purpose: indexes for the audit records of forgetting (:Deletion, one per message, trace or
//   fact forgotten): by tenant and time (the `deletions` audit query), and by tenant, kind and
//   id hash (a repeated forget answers "already forgotten").
// Parameters: none. Columns: none. Idempotent (IF NOT EXISTS).
CREATE INDEX deletion_time IF NOT EXISTS
FOR (d:Deletion) ON (d.tenant, d.at);

CREATE INDEX deletion_id IF NOT EXISTS
FOR (d:Deletion) ON (d.tenant, d.kind, d.id_hash);
