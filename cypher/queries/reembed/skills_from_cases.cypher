// Purpose: re-embedding. A skill's vector is the normalised mean of its supporting cases' vectors:
//   made again from the cases (re-embedded first) for up to $limit skills not yet marked with
//   model $model. A skill with no embedded supporting case loses its vector (it cannot be
//   placed in the new model's space). Every tenant: an operator's migration.
// Parameters: $model (string), $limit (int)
// Columns: written
MATCH (s:Skill)
WHERE s.embedding IS NOT NULL AND coalesce(s.embedding_model, '') <> $model
WITH s LIMIT $limit
OPTIONAL MATCH (s)-[:SUPPORTED_BY]->(c:Case)
  WHERE c.embedding IS NOT NULL AND c.embedding_model = $model
WITH s, collect(c.embedding) AS vectors
WITH s, CASE WHEN size(vectors) = 0 THEN []
             ELSE [i IN range(0, size(vectors[0]) - 1) |
                   reduce(acc = 0.0, v IN vectors | acc + v[i])] END AS total
WITH s, total, sqrt(reduce(acc = 0.0, x IN total | acc + x * x)) AS norm
SET s.embedding = CASE WHEN norm > 0 THEN [x IN total | x / norm] ELSE null END,
    s.embedding_model = $model
RETURN count(s) AS written
