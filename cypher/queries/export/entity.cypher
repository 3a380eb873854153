// Purpose: a page of an owner's entities (the names its messages mention) for the export of an
//   owner (GET /v1/owners/{owner}/export): every stored property (graphmem/lifecycle/export.py leaves out
//   what only serves the Browser), no links (the messages name them: MENTIONS, on each message).
//   An entity's id is its name. Keyset paging: the entity key constraint's index (tenant, owner,
//   name) is read from $after on, in name order, and the read stops after $limit entities. The
//   walk links (kind 'link', graphmem.entities.extract.links) are no entities: left out (a
//   restore forms them again from the messages' text).
// Parameters: $tenant, $owner, $after (the last name of the previous page; '' for the first),
//   $limit
// Columns: id (the name), properties (a map), links (always empty)
MATCH (n:Entity {tenant: $tenant, owner: $owner}) USING INDEX SEEK n:Entity(tenant, owner, name)
WHERE n.name > $after AND n.kind <> 'link'
WITH n ORDER BY n.tenant, n.owner, n.name LIMIT $limit
RETURN n.name AS id, properties(n) AS properties, [] AS links
