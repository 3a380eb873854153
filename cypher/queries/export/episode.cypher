// Purpose: a page of an owner's episodes for the export of an owner (GET /v1/owners/{owner}/export):
//   every stored property (graphmem/lifecycle/export.py leaves out what only serves the indexes and the
//   Browser) and its links: DERIVED_FROM (its messages, in order: idx), NEXT (the owner's next episode).
//   Keyset paging: the (tenant, owner, id) index is read from $after on, in id order, and the
//   read stops after $limit episodes (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Episode {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Episode(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, n {.*, embedding: null} AS properties,
       [(n)-[r:DERIVED_FROM]->(m:Message) | {type: 'DERIVED_FROM', direction: 'out',
                                             kind: 'message', id: m.id, properties: properties(r)}]
       + [(n)-[r:NEXT]->(m:Episode) | {type: 'NEXT', direction: 'out', kind: 'episode', id: m.id,
                                      properties: properties(r)}] AS links
