// Purpose: the cases of one trace, (re)formed: MERGE by id, properties replaced, DERIVED_FROM
//   their steps; cases of the trace no longer formed are removed (their edges with them).
//   Written only if the trace still exists (run under the owner's procedural lock, which
//   forgetting a trace takes too): no row, nothing written, for a trace forgotten meanwhile.
// Parameters: $tenant, $trace_id, $now (datetime), $scope (the owner's fulltext scope,
//   graphmem/store/scope.py), $cases: list of maps {id, props, step_ids}
// Columns: cases (how many were written), removed; no row when the trace is gone
MATCH (t:Trace {tenant: $tenant, id: $trace_id})
CALL () {
  MATCH (old:Case {tenant: $tenant, trace_id: $trace_id})
  WHERE NOT old.id IN [c IN $cases | c.id]
  DETACH DELETE old
  RETURN count(*) AS removed
}
CALL () {
  UNWIND $cases AS row
  MERGE (c:Case {tenant: $tenant, id: row.id})
    ON CREATE SET c.created_at = $now
  SET c += row.props, c.scope = $scope, c.formed_at = $now
  WITH c, row
  CALL (c, row) {
    UNWIND row.step_ids AS sid
    MATCH (s:Step {tenant: $tenant, id: sid})
    MERGE (c)-[:DERIVED_FROM]->(s)
    RETURN count(*) AS linked
  }
  RETURN count(DISTINCT c) AS cases
}
RETURN cases, removed
