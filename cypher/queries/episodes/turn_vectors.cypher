// Purpose: the sentence vectors of some messages (formation's boundary finder compares them).
// Parameters: $tenant, $ids (message ids)
// Columns: id, vectors (list of sentence embeddings, in sentence order)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
CALL (m) {
  MATCH (s:Sentence)-[:PART_OF]->(m)
  WITH s ORDER BY s.idx
  RETURN collect(s.embedding) AS vectors
}
RETURN m.id AS id, vectors
