// Purpose: exact vector recall over the messages of one owner that pass a metadata filter,
//   found through the metadata index (schema/12_metadata.cypher) rather than by reading every
//   sentence of the owner: the similarity of their sentences only, the best per message. Used
//   when the vector index's hits, filtered, hold too few (a selective filter).
// Parameters: $tenant, $owner, $vector, $k, $tokens (Lucene query over metadata_tokens, one
//   clause per key, graphmem/metadata.py `token_query`), $limit (messages read from the index
//   at most), $session_id, $time_from, $time_to, $metadata (the filter's encoded pairs, checked
//   again on the message)
// Columns: id (message id), score (cosine mapped to [0, 1] as the index maps it: (1 + cos) / 2)
CALL db.index.fulltext.queryNodes('message_metadata', $tokens, {limit: $limit})
YIELD node AS m
WITH m WHERE m.tenant = $tenant AND m.owner = $owner
  AND ($session_id IS NULL OR m.session_id = $session_id)
  AND ($time_from IS NULL OR m.timestamp >= $time_from)
  AND ($time_to IS NULL OR m.timestamp < $time_to)
  AND all(accepted IN $metadata WHERE any(p IN accepted WHERE p IN m.metadata_pairs))
MATCH (s:Sentence {tenant: $tenant})-[:PART_OF]->(m)
WITH m.id AS id, max(vector.similarity.cosine(s.embedding, $vector)) AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
