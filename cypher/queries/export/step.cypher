// Purpose: a page of an owner's trace steps for the export of an owner (GET /v1/owners/{owner}/export):
//   every stored property (graphmem/lifecycle/export.py leaves out what only serves the indexes and the
//   Browser) and its links: HAS_STEP (in, from its trace), DERIVED_FROM (in, from the case made of it), NEXT (the following step).
//   Keyset paging: the (tenant, owner, id) index is read from $after on, in id order, and the
//   read stops after $limit trace steps (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Step {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Step(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, properties(n) AS properties,
       [(t:Trace)-[r:HAS_STEP]->(n) | {type: 'HAS_STEP', direction: 'in', kind: 'trace', id: t.id,
                                      properties: properties(r)}]
       + [(c:Case)-[r:DERIVED_FROM]->(n) | {type: 'DERIVED_FROM', direction: 'in', kind: 'case',
                                           id: c.id, properties: properties(r)}]
       + [(n)-[r:NEXT]->(m:Step) | {type: 'NEXT', direction: 'out', kind: 'step', id: m.id,
                                   properties: properties(r)}] AS links
