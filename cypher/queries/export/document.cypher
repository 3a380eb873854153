// Purpose: a page of an owner's document versions (every version, superseded ones included)
//   for the export of an owner (GET /v1/owners/{owner}/export): every stored property, the
//   text included (graphmem/lifecycle/export.py leaves out what only serves the indexes and
//   the Browser) and its links: SUPERSEDES (the version it replaced, with reason and times),
//   IN_TOPIC (the topics it is a member of). Chunks are made again from the text and are not
//   exported. Keyset paging: the (tenant, owner, id) index is read from $after on, in id
//   order, and the read stops after $limit versions (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Document {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Document(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, properties(n) AS properties,
       [(n)-[r:SUPERSEDES]->(m:Document) | {type: 'SUPERSEDES', direction: 'out',
                                            kind: 'document', id: m.id,
                                            properties: properties(r)}]
       + [(n)-[r:IN_TOPIC]->(t:Topic) | {type: 'IN_TOPIC', direction: 'out', kind: 'topic',
                                         id: t.id, properties: properties(r)}] AS links
