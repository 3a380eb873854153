// Purpose: a page of an owner's cases for the export of an owner (GET /v1/owners/{owner}/export):
//   every stored property (graphmem/lifecycle/export.py leaves out what only serves the indexes and the
//   Browser) and its links: IN_CLUSTER (its cluster), SUPPORTED_BY and CONTRADICTED_BY (in, from the skill versions it supports or counts against).
//   Keyset paging: the (tenant, owner, id) index is read from $after on, in id order, and the
//   read stops after $limit cases (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Case {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Case(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, n {.*, embedding: null} AS properties,
       [(n)-[r:IN_CLUSTER]->(k:Cluster) | {type: 'IN_CLUSTER', direction: 'out', kind: 'cluster',
                                           id: k.id, properties: properties(r)}]
       + [(s:Skill)-[r:SUPPORTED_BY|CONTRADICTED_BY]->(n) | {type: type(r), direction: 'in',
                                                             kind: 'skill', id: s.id,
                                                             properties: properties(r)}] AS links
