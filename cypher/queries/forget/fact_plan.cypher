// Purpose: before forgetting a fact: find it and take the write lock of its chain (the FactKey
//   the Linker locks), so no fact of that chain is being linked meanwhile.
// Parameters: $tenant, $id, $now
// Columns: owner
MATCH (f:Fact {tenant: $tenant, id: $id})
MERGE (key:FactKey {tenant: $tenant, kind: f.kind, owner: f.owner, subject: f.subject,
                    type: f.type})
  ON CREATE SET key.created_at = $now
SET key.locked_at = $now
RETURN f.owner AS owner
