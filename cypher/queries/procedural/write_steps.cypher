// Purpose: the steps of newly created traces: one :Step per user turn, assistant turn, tool call
//   and tool result, (:Trace)-[:HAS_STEP]->(:Step), chained (:Step)-[:NEXT]->(:Step) in order.
//   One trace lookup per trace; the chain links the nodes just created (no lookup per link).
// Parameters: $tenant, $traces: list of maps {id, steps: list of maps {id, trace_id, owner,
//   index, kind, text, tool, arguments, arg_keys, call_id, writes, error, at, caption}, in order}
// Columns: traces, steps (how many were created)
UNWIND $traces AS tr
MATCH (t:Trace {tenant: $tenant, id: tr.id})
CALL (t, tr) {
  UNWIND tr.steps AS row
  CREATE (s:Step {tenant: $tenant, id: row.id})
  SET s += row
  CREATE (t)-[:HAS_STEP]->(s)
  WITH s ORDER BY s.index
  WITH collect(s) AS made
  CALL (made) {
    UNWIND range(1, size(made) - 1) AS i
    WITH made[i - 1] AS a, made[i] AS b
    CREATE (a)-[:NEXT]->(b)
    RETURN count(*) AS links
  }
  RETURN size(made) AS made
}
RETURN count(t) AS traces, sum(made) AS steps
