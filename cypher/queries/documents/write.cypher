// Purpose: create one document version: the Document (its text the ground truth), its Sections
//   (PART_OF the document, SUBSECTION_OF their parent) and Chunks (PART_OF the document,
//   IN_SECTION their innermost section, NEXT in reading order). The previous current version,
//   if any, is closed: valid until $doc.valid_from, its chunks too, and the new version
//   SUPERSEDES it with the reason and the times. Runs under the key's lock (lock.cypher).
// Parameters: $tenant, $doc (Document properties, id included), $previous (id or null),
//   $reason, $now, $scope (the owner's fulltext scope), $sections (list of {id, order, level,
//   path, title, start, end, parent}), $chunks (list of chunk properties, id included)
// Columns: id
CREATE (d:Document {tenant: $tenant, id: $doc.id})
SET d += $doc, d.current = true, d.recorded_at = $now
WITH d
CALL (d) {
  OPTIONAL MATCH (old:Document {tenant: $tenant, id: $previous})
  WITH old WHERE old IS NOT NULL
  SET old.current = false, old.valid_to = d.valid_from, old.superseded_at = $now
  CREATE (d)-[:SUPERSEDES {reason: $reason, at: $now, valid_from: d.valid_from}]->(old)
  WITH old
  MATCH (oc:Chunk {tenant: $tenant, document_id: old.id})
  SET oc.valid_to = d.valid_from
}
CALL (d) {
  UNWIND $sections AS row
  CREATE (s:Section {tenant: $tenant, id: row.id})
  SET s += row, s.owner = d.owner, s.document_id = d.id, s.key = d.key
  CREATE (s)-[:PART_OF]->(d)
}
CALL (d) {
  UNWIND $sections AS row
  WITH row WHERE row.parent IS NOT NULL
  MATCH (s:Section {tenant: $tenant, id: row.id})
  MATCH (p:Section {tenant: $tenant, id: row.parent})
  CREATE (s)-[:SUBSECTION_OF]->(p)
}
CALL (d) {
  UNWIND $chunks AS row
  CREATE (c:Chunk {tenant: $tenant, id: row.id})
  SET c += row, c.scope = $scope
  CREATE (c)-[:PART_OF]->(d)
  WITH c, row WHERE row.section_id IS NOT NULL
  MATCH (s:Section {tenant: $tenant, id: row.section_id})
  CREATE (c)-[:IN_SECTION]->(s)
}
CALL (d) {
  UNWIND range(0, size($chunks) - 2) AS i
  MATCH (a:Chunk {tenant: $tenant, id: $chunks[i].id})
  MATCH (b:Chunk {tenant: $tenant, id: $chunks[i + 1].id})
  CREATE (a)-[:NEXT]->(b)
}
RETURN d.id AS id
