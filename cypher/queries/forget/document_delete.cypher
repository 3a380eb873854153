// Purpose: forget one document: every version of its owner's key (a version kept would keep the
//   content), their sections and chunks, and the key's lock; topics lose it from their member
//   counts. Nothing else rests on a document.
// Parameters: $tenant, $id (any version's id)
// Columns: owner, key, versions, sections, chunks (no row for an id never stored)
MATCH (d:Document {tenant: $tenant, id: $id})
WITH d.owner AS owner, d.key AS key
MATCH (v:Document {tenant: $tenant, owner: owner, key: key})
WITH owner, key, collect(v) AS versions
CALL (versions) {
  UNWIND versions AS v
  MATCH (s:Section {tenant: $tenant, document_id: v.id})
  DETACH DELETE s
  RETURN count(*) AS sections
}
CALL (versions) {
  UNWIND versions AS v
  MATCH (c:Chunk {tenant: $tenant, document_id: v.id})
  DETACH DELETE c
  RETURN count(*) AS chunks
}
CALL (versions) {
  UNWIND versions AS v
  OPTIONAL MATCH (v)-[:IN_TOPIC]->(t:Topic)
  WITH t, count(v) AS gone WHERE t IS NOT NULL
  SET t.documents = t.documents - gone
}
CALL (owner, key) {
  MATCH (l:DocumentLock {tenant: $tenant, owner: owner, key: key})
  DETACH DELETE l
}
CALL (versions) {
  UNWIND versions AS v
  DETACH DELETE v
}
RETURN owner, key, size(versions) AS versions, sections, chunks
