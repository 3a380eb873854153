// Purpose: an owner's topics whose label matches a query (Lucene over topic_fulltext: a topic's
//   label, keyphrases and LLM summary; +scope reads only the owner's topics, weighing 0), each
//   with its current member documents, for chunk search. $query must already be escaped.
// Parameters: $tenant, $owner, $scope (graphmem/store/scope.py), $query, $k (topics at most)
// Columns: id, level, score (Lucene's), documents (ids of the current member versions)
CALL db.index.fulltext.queryNodes('topic_fulltext',
  '+scope:' + $scope + '^0 +search_text:(' + $query + ')', {limit: 4 * $k})
YIELD node, score
WITH node AS t, score
WHERE score > 0 AND t.tenant = $tenant AND t.owner = $owner
WITH t, score
ORDER BY score DESC, t.id
LIMIT $k
CALL (t) {
  OPTIONAL MATCH (d:Document {tenant: $tenant})-[:IN_TOPIC]->(t)
  WHERE d.current
  RETURN collect(d.id) AS documents
}
RETURN t.id AS id, t.level AS level, score, documents
ORDER BY score DESC, id
