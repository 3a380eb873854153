// Purpose: the steps of newly created traces: one :Step per user turn, assistant turn, tool call
//   and tool result, (:Trace)-[:HAS_STEP]->(:Step), chained (:Step)-[:NEXT]->(:Step) in order.
// Parameters: $tenant, $steps: list of maps {id, trace_id, owner, index, kind, text, tool,
//   arguments, arg_keys, call_id, writes, error, at, caption}; $links: list of {a, b} step ids
// Columns: steps (how many were created)
CALL () {
  UNWIND $steps AS row
  MATCH (t:Trace {tenant: $tenant, id: row.trace_id})
  CREATE (s:Step {tenant: $tenant, id: row.id})
  SET s += row
  CREATE (t)-[:HAS_STEP]->(s)
  RETURN count(*) AS steps
}
CALL () {
  UNWIND $links AS link
  MATCH (a:Step {tenant: $tenant, id: link.a}), (b:Step {tenant: $tenant, id: link.b})
  CREATE (a)-[:NEXT]->(b)
  RETURN count(*) AS links
}
RETURN steps
