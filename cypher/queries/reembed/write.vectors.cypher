// Purpose: write.cypher where the connection carries vector values (Bolt 6, Neo4j 2025.10+):
//   each row's embedding arrives as one vector value and is stored as the same list of floats
//   (`toFloatList`, Cypher 25).
// Parameters: $model (string), $rows: list of {eid (elementId), embedding (a vector value)}
// Columns: written
CYPHER 25
UNWIND $rows AS row
MATCH (n) WHERE elementId(n) = row.eid
SET n.embedding = toFloatList(row.embedding), n.embedding_model = $model
RETURN count(n) AS written
