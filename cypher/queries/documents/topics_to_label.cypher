// Purpose: an owner's topics (categories and their parts) no LLM has labelled yet (label_model
//   null), each with its keyphrases, a few member titles and the opening text of a few member
//   documents: what the LLM labels and summarises it from.
// Parameters: $tenant, $owner, $limit (topics at most), $documents (members read per topic at
//   most), $chunks (chunks read per member at most)
// Columns: id, level, keyphrases, titles (list), excerpts (list of texts)
MATCH (t:Topic {tenant: $tenant, owner: $owner})
WHERE t.label_model IS NULL
WITH t ORDER BY t.level, t.documents DESC, t.id LIMIT $limit
CALL (t) {
  OPTIONAL MATCH (d:Document {tenant: $tenant})-[:IN_TOPIC]->(t)
  WHERE d.current
  WITH d ORDER BY d.key LIMIT $documents
  CALL (d) {
    OPTIONAL MATCH (c:Chunk {tenant: $tenant, document_id: d.id})
    WITH c ORDER BY c.ordinal LIMIT $chunks
    RETURN reduce(s = '', x IN collect(c.text) | s + CASE WHEN s = '' THEN '' ELSE '\n' END + x)
           AS excerpt
  }
  RETURN collect(coalesce(d.title, d.key)) AS titles, collect(excerpt) AS excerpts
}
RETURN t.id AS id, t.level AS level, coalesce(t.keyphrases, t.label) AS keyphrases, titles,
       excerpts
ORDER BY t.level, id
