// Purpose: re-embedding. Store new embeddings, marking each node with the model that made it (a
//   re-run skips what is done).
// Parameters: $model (string), $rows: list of {eid (elementId), embedding (list of floats)}
// Columns: written
UNWIND $rows AS row
MATCH (n) WHERE elementId(n) = row.eid
SET n.embedding = row.embedding, n.embedding_model = $model
RETURN count(n) AS written
