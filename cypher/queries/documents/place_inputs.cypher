// Purpose: what placing one document version in its owner's topic tree needs: the version
//   (current? placed already?), the embeddings of its first chunks, the owner's topics with
//   their centroids, when the tree was last built, and how many current versions the owner
//   has and how many of them were stored since that build.
// Parameters: $tenant, $id (the version), $chunks (int: chunks read at most)
// Columns: id, owner, current, placed (bool: it has IN_TOPIC links), vectors (list of
//   embeddings), topics (list of {id, level, parent, embedding}), built_at (null: never),
//   documents (the owner's current versions), changed (those stored after built_at)
MATCH (d:Document {tenant: $tenant, id: $id})
CALL (d) {
  OPTIONAL MATCH (c:Chunk {tenant: $tenant, document_id: d.id})
  WHERE c.embedding IS NOT NULL
  WITH c ORDER BY c.ordinal LIMIT $chunks
  RETURN collect(c.embedding) AS vectors
}
CALL (d) {
  OPTIONAL MATCH (t:Topic {tenant: $tenant, owner: d.owner})
  RETURN collect(t {.id, .level, .parent, .embedding}) AS topics, max(t.built_at) AS built_at
}
CALL (d, built_at) {
  MATCH (o:Document {tenant: $tenant, owner: d.owner})
  WHERE o.current
  RETURN count(o) AS documents,
         count(CASE WHEN built_at IS NULL OR o.recorded_at > built_at THEN 1 END) AS changed
}
RETURN d.id AS id, d.owner AS owner, d.current AS current,
       EXISTS { (d)-[:IN_TOPIC]->(:Topic) } AS placed, vectors, topics, built_at, documents,
       changed
