// Purpose: an owner's topics nearest a query vector (exact cosine over their centroids: an owner
//   has few topics), each with its member documents (current versions), for chunk search.
// Parameters: $tenant, $owner, $vector, $k (topics at most)
// Columns: id, level, score (cosine mapped to [0, 1] as the vector index maps it), documents
//   (ids of the current member versions)
MATCH (t:Topic {tenant: $tenant, owner: $owner})
WHERE t.embedding IS NOT NULL
WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
ORDER BY score DESC, t.id
LIMIT $k
CALL (t) {
  OPTIONAL MATCH (d:Document {tenant: $tenant})-[:IN_TOPIC]->(t)
  WHERE d.current
  RETURN collect(d.id) AS documents
}
RETURN t.id AS id, t.level AS level, score, documents
ORDER BY score DESC, id
