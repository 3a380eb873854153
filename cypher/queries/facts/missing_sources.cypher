// Purpose: which of the given source ids name no message, fact or episode of the tenant (with
//   $owners, none of those owners': a key limited to some owners cannot cite, or learn of,
//   another owner's messages).
// Parameters: $tenant, $ids, $owners (list of owner names, or null for every owner)
// Columns: missing (list of ids)
UNWIND $ids AS id
OPTIONAL MATCH (m:Message {tenant: $tenant, id: id})
OPTIONAL MATCH (f:Fact {tenant: $tenant, id: id})
OPTIONAL MATCH (e:Episode {tenant: $tenant, id: id})
WITH id, [n IN [m, f, e] WHERE n IS NOT NULL AND ($owners IS NULL OR n.owner IN $owners)]
  AS found
WITH id WHERE size(found) = 0
RETURN collect(id) AS missing
