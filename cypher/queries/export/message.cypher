// Purpose: a page of an owner's messages for the export of an owner (GET /v1/owners/{owner}/export):
//   every stored property (graphmem/lifecycle/export.py leaves out what only serves the indexes and the
//   Browser) and its links: NEXT (the following turn), MENTIONS (the entities it names; not
//   the walk links, kind 'link', which are formed again from the text).
//   Keyset paging: the (tenant, owner, id) index is read from $after on, in id order, and the
//   read stops after $limit messages (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Message {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Message(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, properties(n) AS properties,
       [(n)-[r:NEXT]->(m:Message) | {type: 'NEXT', direction: 'out', kind: 'message', id: m.id,
                                     properties: properties(r)}]
       + [(n)-[r:MENTIONS]->(e:Entity) WHERE e.kind <> 'link' |
          {type: 'MENTIONS', direction: 'out', kind: 'entity', id: e.name,
           properties: properties(r)}] AS links
