// Purpose: the facts that rest only on what is being forgotten: facts with a SUPPORTED_BY edge
//   to one of the given messages, episodes or facts, and none to anything else. (A fact that
//   never had a source is not listed: nothing it rests on is being forgotten.) Callers repeat
//   with the facts found until none is new (a fact may rest on facts).
// Parameters: $tenant, $messages, $episodes, $facts (ids being forgotten, per label)
// Columns: id
CALL () {
  UNWIND $messages AS sid
  MATCH (s:Message {tenant: $tenant, id: sid})
  RETURN s
  UNION
  UNWIND $episodes AS sid
  MATCH (s:Episode {tenant: $tenant, id: sid})
  RETURN s
  UNION
  UNWIND $facts AS sid
  MATCH (s:Fact {tenant: $tenant, id: sid})
  RETURN s
}
MATCH (f:Fact {tenant: $tenant})-[:SUPPORTED_BY]->(s)
WHERE NOT f.id IN $facts
WITH DISTINCT f
WHERE NOT EXISTS {
  MATCH (f)-[:SUPPORTED_BY]->(y)
  WHERE NOT ((y:Message AND y.id IN $messages) OR (y:Episode AND y.id IN $episodes)
             OR (y:Fact AND y.id IN $facts))
}
RETURN f.id AS id
ORDER BY id
