// Purpose: a page of an owner's facts (every version: history included) for the export of an owner (GET /v1/owners/{owner}/export):
//   every stored property (graphmem/lifecycle/export.py leaves out what only serves the indexes and the
//   Browser) and its links: SUPPORTED_BY (its sources: messages, episodes, facts), SUPERSEDES (the version it revised, with reason and source).
//   Keyset paging: the (tenant, owner, id) index is read from $after on, in id order, and the
//   read stops after $limit facts (every version: history included) (a page costs its own size).
// Parameters: $tenant, $owner, $after (the last id of the previous page; '' for the first),
//   $limit
// Columns: id, properties (a map), links (maps {type, direction: 'out' or 'in', kind, id,
//   properties}: the records this one is linked to)
MATCH (n:Fact {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Fact(tenant, owner, id)
WHERE n.id > $after
WITH n ORDER BY n.tenant, n.owner, n.id LIMIT $limit
RETURN n.id AS id, n {.*, embedding: null} AS properties,
       [(n)-[r:SUPPORTED_BY]->(m) WHERE m:Message OR m:Episode OR m:Fact |
        {type: 'SUPPORTED_BY', direction: 'out',
         kind: CASE WHEN m:Message THEN 'message' WHEN m:Episode THEN 'episode' ELSE 'fact' END,
         id: m.id, properties: properties(r)}]
       + [(n)-[r:SUPERSEDES]->(m:Fact) | {type: 'SUPERSEDES', direction: 'out', kind: 'fact',
                                         id: m.id, properties: properties(r)}] AS links
