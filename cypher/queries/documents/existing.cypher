// Purpose: which of the given document version ids are stored (a restore leaves those as they
//   are).
// Parameters: $tenant, $ids (list of document version ids)
// Columns: id
UNWIND $ids AS id
MATCH (d:Document {tenant: $tenant, id: id})
RETURN d.id AS id
