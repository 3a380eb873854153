// Purpose: store embeddings of chunks of one document version; the version becomes ready when
//   none of its chunks is left without one.
// Parameters: $tenant, $id (the document version), $rows (list of {id, embedding})
// Columns: state (of the document after the write; no row for a forgotten document)
MATCH (d:Document {tenant: $tenant, id: $id})
CALL (d) {
  UNWIND $rows AS row
  MATCH (c:Chunk {tenant: $tenant, id: row.id})
  WHERE c.document_id = d.id
  SET c.embedding = row.embedding
}
WITH d, COUNT { MATCH (c:Chunk {tenant: $tenant, document_id: d.id}) WHERE c.embedding IS NULL }
  AS left
SET d.state = CASE WHEN left = 0 THEN 'ready' ELSE 'embedding' END
RETURN d.state AS state
