// Purpose: a page of an owner's topics (the categories of its documents) for the export of an
//   owner (GET /v1/owners/{owner}/export): every stored property but the centroid
//   (graphmem/lifecycle/export.py leaves out embeddings) and its links: SUBTOPIC_OF (its
//   parent topic). Its members list it (IN_TOPIC on document and section records). Keyset
//   paging: the (tenant, owner, id) index is read from $after on, in id order, and the read
//   stops after $limit topics (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Topic {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Topic(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, n {.*, embedding: null} AS properties,
       [(n)-[r:SUBTOPIC_OF]->(p:Topic) | {type: 'SUBTOPIC_OF', direction: 'out', kind: 'topic',
                                          id: p.id, properties: properties(r)}] AS links
