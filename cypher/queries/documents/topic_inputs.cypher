// Purpose: what an owner's topic tree is built from: each current document version with the
//   embeddings and the text of its first chunks.
// Parameters: $tenant, $owner, $chunks (int: chunks read per document at most)
// Columns: id, title, valid_from, vectors (list of embeddings), texts (list of chunk texts)
MATCH (d:Document {tenant: $tenant, owner: $owner})
WHERE d.current
CALL (d) {
  MATCH (c:Chunk {tenant: $tenant, document_id: d.id})
  WHERE c.embedding IS NOT NULL
  WITH c ORDER BY c.ordinal LIMIT $chunks
  RETURN collect(c.embedding) AS vectors, collect(c.text) AS texts
}
WITH d, vectors, texts WHERE size(vectors) > 0
RETURN d.id AS id, d.title AS title, d.valid_from AS valid_from, vectors, texts
ORDER BY d.key
