// Purpose: a page of an owner's agent runs (traces) for the export of an owner (GET /v1/owners/{owner}/export):
//   every stored property (graphmem/lifecycle/export.py leaves out what only serves the indexes and the
//   Browser) and no links (its steps name it: HAS_STEP, on each step).
//   Keyset paging: the (tenant, owner, id) index is read from $after on, in id order, and the
//   read stops after $limit agent runs (traces) (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Trace {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Trace(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, properties(n) AS properties, [] AS links
