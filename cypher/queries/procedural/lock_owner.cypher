// Purpose: take the owner's procedural formation lock (MERGE, then a write on it) so two skill
//   formations of one owner run one after the other.
// Parameters: $tenant, $owner, $now (datetime)
// Columns: owner
MERGE (l:ProceduralLock {tenant: $tenant, owner: $owner})
SET l.locked_at = $now, l.caption = 'formation lock: ' + $owner
RETURN l.owner AS owner
