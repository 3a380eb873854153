// Purpose: record that fact $by SUPERSEDES fact $of: close $of at $valid_to (its valid_to was
//   $previous) and keep when, why and on what evidence. Nothing is deleted.
// Parameters: $tenant, $by, $of, $valid_to, $previous, $now, $reason, $source
// Columns: none
MATCH (new:Fact {tenant: $tenant, id: $by}), (old:Fact {tenant: $tenant, id: $of})
SET old.valid_to = $valid_to, old.invalidated_at = coalesce(old.invalidated_at, $now)
CREATE (new)-[:SUPERSEDES {at: $now, reason: $reason, source: $source,
                           closed_valid_to: $valid_to, previous_valid_to: $previous}]->(old)
