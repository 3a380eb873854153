// Purpose: the (tenant, owner) pairs with messages whose word pieces are missing or come from
//   another sparse model, every tenant (`graphmem schema sparse`, an operator's backfill).
// Parameters: $model, $limit
// Columns: tenant, owner
MATCH (m:Message)
WHERE m.sparse_model IS NULL OR m.sparse_model <> $model
WITH DISTINCT m.tenant AS tenant, m.owner AS owner
RETURN tenant, owner
LIMIT $limit
