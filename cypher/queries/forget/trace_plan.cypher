// Purpose: before forgetting a trace: find it and take its owner's procedural formation lock,
//   so no skill formation of that owner runs halfway through.
// Parameters: $tenant, $id, $now
// Columns: owner
MATCH (t:Trace {tenant: $tenant, id: $id})
MERGE (l:ProceduralLock {tenant: $tenant, owner: t.owner})
SET l.locked_at = $now
RETURN t.owner AS owner
