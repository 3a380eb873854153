// Purpose: exact vector recall over the messages of one owner that pass a metadata filter,
//   found through the metadata index (schema/12_metadata.cypher) rather than by reading every
//   sentence of the owner: the similarity of their sentences only, the best per message. Used
//   when the vector index's hits, filtered, hold too few (a selective filter).
// Parameters: $tenant, $owner, $vector, $k, $tokens (Lucene query over metadata_tokens, one
//   clause per key that names values, graphmem/messages/metadata.py `token_query`), $limit (messages
//   read from the index at most), $session_id, $time_from, $time_to, $metadata (the filter's
//   clauses, every one checked on the message)
// Columns: id (message id), score (cosine mapped to [0, 1] as the index maps it: (1 + cos) / 2)
CALL db.index.fulltext.queryNodes('message_metadata', $tokens, {limit: $limit})
YIELD node AS m
WITH m WHERE m.tenant = $tenant AND m.owner = $owner
  AND ($session_id IS NULL OR m.session_id = $session_id)
  AND ($time_from IS NULL OR m.timestamp >= $time_from)
  AND ($time_to IS NULL OR m.timestamp < $time_to)
  AND ($metadata IS NULL OR all(c IN $metadata WHERE
        (c.any IS NULL OR any(p IN c.any WHERE p IN m.metadata_pairs))
        AND none(p IN c.none WHERE p IN coalesce(m.metadata_pairs, []))
        AND (c.has IS NULL
             OR c.has = any(p IN coalesce(m.metadata_pairs, []) WHERE p STARTS WITH c.prefix))
        AND (c.low IS NULL AND c.high IS NULL
             OR any(v IN [p IN coalesce(m.metadata_pairs, []) WHERE p STARTS WITH c.prefix
                          | toFloat(substring(p, size(c.prefix), size(p) - size(c.prefix) - 1))]
                    WHERE (c.low IS NULL OR v >= c.low) AND (c.high IS NULL OR v <= c.high)))))
MATCH (s:Sentence {tenant: $tenant})-[:PART_OF]->(m)
WITH m.id AS id, max(vector.similarity.cosine(s.embedding, $vector)) AS score
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
