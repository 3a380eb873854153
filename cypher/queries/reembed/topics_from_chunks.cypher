// Purpose: re-embedding. A topic's vector is the normalised mean of its member documents'
//   vectors, each the mean of the document's first $chunks chunk vectors (as the topic tree is
//   built): made again from the chunks (re-embedded first) for up to $limit topics not yet
//   marked with model $model. A topic with no re-embedded member chunk loses its vector until
//   the tree is built again. Every tenant: an operator's migration.
// Parameters: $model (string), $limit (int), $chunks (int: chunks read per document at most)
// Columns: written
MATCH (t:Topic)
WHERE t.embedding IS NOT NULL AND coalesce(t.embedding_model, '') <> $model
WITH t LIMIT $limit
CALL (t) {
  OPTIONAL MATCH (d:Document)-[:IN_TOPIC]->(t)
  CALL (d) {
    MATCH (c:Chunk {tenant: d.tenant, document_id: d.id})
    WHERE c.embedding IS NOT NULL AND c.embedding_model = $model
    WITH c ORDER BY c.ordinal LIMIT $chunks
    WITH collect(c.embedding) AS vs
    RETURN CASE WHEN size(vs) = 0 THEN null
                ELSE [i IN range(0, size(vs[0]) - 1) |
                      reduce(acc = 0.0, v IN vs | acc + v[i]) / size(vs)] END AS mean
  }
  RETURN collect(mean) AS vectors
}
WITH t, CASE WHEN size(vectors) = 0 THEN []
             ELSE [i IN range(0, size(vectors[0]) - 1) |
                   reduce(acc = 0.0, v IN vectors | acc + v[i])] END AS total
WITH t, total, sqrt(reduce(acc = 0.0, x IN total | acc + x * x)) AS norm
SET t.embedding = CASE WHEN norm > 0 THEN [x IN total | x / norm] ELSE null END,
    t.embedding_model = $model
RETURN count(t) AS written
