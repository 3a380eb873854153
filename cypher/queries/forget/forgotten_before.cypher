// Purpose: was a thing of this kind with this id forgotten before (a repeated forget then
//   answers "already forgotten", not 404)?
// Parameters: $tenant, $kind, $id_hash
// Columns: at (the latest forgetting; null when never)
OPTIONAL MATCH (d:Deletion {tenant: $tenant, kind: $kind, id_hash: $id_hash})
RETURN max(d.at) AS at
