// Purpose: write one skill version: create it (or, for an unchanged procedure, update its support
//   in place), and MERGE its evidence edges: (:Skill)-[:SUPPORTED_BY]->(:Case) for successful
//   cases, (:Skill)-[:CONTRADICTED_BY]->(:Case) for failed ones; an edge to a case no longer in
//   the skill's cluster is removed (the case moved; earlier versions keep theirs).
// Parameters: $tenant, $id, $props (map), $supporting (case ids), $contradicting (case ids),
//   $now (datetime), $scope (the owner's fulltext scope, graphmem/store/scope.py)
// Columns: id, created
MERGE (s:Skill {tenant: $tenant, id: $id})
  ON CREATE SET s.created_at = $now
WITH s, s.created_at = $now AS created
SET s += $props, s.scope = $scope, s.formed_at = $now
WITH s, created
CALL (s) {
  MATCH (s)-[r:SUPPORTED_BY|CONTRADICTED_BY]->(c:Case)
  WHERE NOT c.id IN $supporting + $contradicting
  DELETE r
  RETURN count(*) AS dropped
}
CALL (s) {
  UNWIND $supporting AS cid
  MATCH (c:Case {tenant: $tenant, id: cid})
  OPTIONAL MATCH (s)-[wrong:CONTRADICTED_BY]->(c)
  DELETE wrong
  MERGE (s)-[r:SUPPORTED_BY]->(c)
    ON CREATE SET r.at = $now
  RETURN count(*) AS supported
}
CALL (s) {
  UNWIND $contradicting AS cid
  MATCH (c:Case {tenant: $tenant, id: cid})
  OPTIONAL MATCH (s)-[wrong:SUPPORTED_BY]->(c)
  DELETE wrong
  MERGE (s)-[r:CONTRADICTED_BY]->(c)
    ON CREATE SET r.at = $now
  RETURN count(*) AS contradicted
}
RETURN s.id AS id, created
