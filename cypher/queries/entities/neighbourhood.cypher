// Purpose: the graph around the best candidates of a search, read in one query for the
//   personalised PageRank of the `graph` method: the candidates, their NEXT neighbours, the
//   entities they mention and those the query names (walk links, kind 'link', included),
//   other messages mentioning those entities, and the episodes and current facts of every
//   message read. Bounded: entities mentioned by more than $max_degree messages (speakers,
//   everyday words) are left out; at most $max_entities entities (the query's first, then the
//   rarest; walk links, kind 'link', after the other entities) and $per_entity other messages
//   per entity are read.
// Parameters: $tenant, $owner, $ids (candidate message ids), $names (entity names the query
//   mentions), $max_degree, $max_entities, $per_entity
// Columns: messages (maps {id, session_id}), next (pairs [a, b] of consecutive messages),
//   entities (maps {name, degree, query}), mentions (pairs [message id, entity name], entities
//   of `entities` only), episodes (pairs [message id, episode id]), facts (pairs [message id,
//   fact id])
CALL () {
  UNWIND $ids AS id
  MATCH (m:Message {tenant: $tenant, id: id})
  WHERE m.owner = $owner
  RETURN collect(m) AS seeds
}
CALL (seeds) {
  UNWIND seeds AS m
  MATCH (m)-[r:NEXT]-(n:Message)
  RETURN collect(DISTINCT n) AS near, collect(DISTINCT [startNode(r).id, endNode(r).id]) AS next
}
CALL () {
  UNWIND $names AS name
  MATCH (q:Entity {tenant: $tenant, owner: $owner, name: name})
  RETURN collect(q) AS asked
}
CALL (seeds, asked) {
  WITH asked, reduce(acc = [], m IN seeds | acc + [(m)-[:MENTIONS]->(e:Entity) | e]) AS found
  UNWIND asked + found AS e
  WITH DISTINCT e, asked
  WITH e, e IN asked AS query, COUNT { (e)<-[:MENTIONS]-() } AS degree
  WHERE degree <= $max_degree
  WITH e, query, degree ORDER BY query DESC, e.kind = 'link', degree, e.name LIMIT $max_entities
  CALL (e) {
    MATCH (e)<-[:MENTIONS]-(o:Message)
    WITH o ORDER BY o.timestamp, o.id LIMIT $per_entity
    RETURN collect(o) AS others
  }
  RETURN collect(e) AS chosen, collect(e {.name, degree: degree, query: query}) AS entities,
         reduce(acc = [], x IN collect(others) | acc + x) AS others
}
CALL (seeds, near, others) {
  UNWIND seeds + near + others AS m
  WITH DISTINCT m
  RETURN collect(m) AS nodes
}
CALL (nodes, chosen) {
  UNWIND nodes AS m
  MATCH (m)-[:MENTIONS]->(e:Entity)
  WHERE e IN chosen
  RETURN collect([m.id, e.name]) AS mentions
}
CALL (nodes) {
  UNWIND nodes AS m
  MATCH (ep:Episode)-[:DERIVED_FROM]->(m)
  RETURN collect([m.id, ep.id]) AS episodes
}
CALL (nodes) {
  UNWIND nodes AS m
  MATCH (f:Fact)-[:SUPPORTED_BY]->(m)
  WHERE f.invalidated_at IS NULL
  RETURN collect([m.id, f.id]) AS facts
}
RETURN [m IN nodes | m {.id, .session_id}] AS messages, next, entities, mentions, episodes,
       facts
