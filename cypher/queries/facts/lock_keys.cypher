// Purpose: take the write lock of each fact chain a batch touches (callers pass keys sorted, so
//   concurrent writers lock in the same order). Two writers of one chain run one after the other,
//   which keeps "at most one current fact" true under concurrency.
// Parameters: $tenant, $now, $keys: list of {kind, owner, subject, type}
// Columns: none
UNWIND $keys AS k
MERGE (key:FactKey {tenant: $tenant, kind: k.kind, owner: k.owner, subject: k.subject, type: k.type})
  ON CREATE SET key.created_at = $now
SET key.locked_at = $now
