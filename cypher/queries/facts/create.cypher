// Purpose: create one fact node (an Observation or a ProfileFact; both are :Fact).
// Parameters: $tenant, $id, $kind ('observation' | 'profile'), $props (map of its properties)
// Columns: id
CREATE (f:Fact {tenant: $tenant, id: $id})
SET f += $props, f.kind = $kind
FOREACH (_ IN CASE WHEN $kind = 'observation' THEN [1] ELSE [] END | SET f:Observation)
FOREACH (_ IN CASE WHEN $kind = 'profile' THEN [1] ELSE [] END | SET f:ProfileFact)
RETURN f.id AS id
