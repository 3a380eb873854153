// Purpose: a page of an owner's document sections (the headings of every version) for the
//   export of an owner (GET /v1/owners/{owner}/export): every stored property
//   (graphmem/lifecycle/export.py leaves out what only serves the indexes and the Browser) and
//   its links: PART_OF (its document version), SUBSECTION_OF (the enclosing section),
//   IN_TOPIC (the topic a top-level section is filed under). Keyset paging: the (tenant,
//   owner, id) index is read from $after on, in id order, and the read stops after $limit
//   sections (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Section {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Section(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, properties(n) AS properties,
       [(n)-[r:PART_OF]->(d:Document) | {type: 'PART_OF', direction: 'out', kind: 'document',
                                         id: d.id, properties: properties(r)}]
       + [(n)-[r:SUBSECTION_OF]->(s:Section) | {type: 'SUBSECTION_OF', direction: 'out',
                                                kind: 'section', id: s.id,
                                                properties: properties(r)}]
       + [(n)-[r:IN_TOPIC]->(t:Topic) | {type: 'IN_TOPIC', direction: 'out', kind: 'topic',
                                         id: t.id, properties: properties(r)}] AS links
