// Purpose: a page of an owner's skills (every version) for the export of an owner (GET /v1/owners/{owner}/export):
//   every stored property (graphmem/lifecycle/export.py leaves out what only serves the indexes and the
//   Browser) and its links: SUPERSEDES (the version it revised, with reason and sources; its cases name it: SUPPORTED_BY and CONTRADICTED_BY, on each case).
//   Keyset paging: the (tenant, owner, id) index is read from $after on, in id order, and the
//   read stops after $limit skills (every version) (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Skill {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Skill(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, n {.*, embedding: null} AS properties,
       [(n)-[r:SUPERSEDES]->(m:Skill) | {type: 'SUPERSEDES', direction: 'out', kind: 'skill',
                                        id: m.id, properties: properties(r)}] AS links
