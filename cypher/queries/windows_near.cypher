// Purpose: queries/windows for a short reach ($before and $after at most 3, what the default
//   expansion asks): the same rows, but the variable-length expansion stops at 3 steps each way
//   instead of 21 (Cypher needs literal bounds, and the planner does not stop early at
//   `length(p) <= $before`): about a third fewer database hits for 10 hits.
// Parameters: $tenant, $ids, $before, $after (each 0-3)
// Columns: as queries/windows: windows (one row: per hit found, {id, earlier, message, later})
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
CALL (m) {
  OPTIONAL MATCH pb = (m)<-[:NEXT*1..3]-(:Message)
  WHERE length(pb) <= $before
  RETURN pb ORDER BY length(pb) DESC LIMIT 1
}
CALL (m) {
  OPTIONAL MATCH pa = (m)-[:NEXT*1..3]->(:Message)
  WHERE length(pa) <= $after
  RETURN pa ORDER BY length(pa) DESC LIMIT 1
}
WITH id, m,
  CASE WHEN pb IS NULL THEN [] ELSE reverse(nodes(pb)[1..]) END AS earlier,
  CASE WHEN pa IS NULL THEN [] ELSE nodes(pa)[1..] END AS later
RETURN collect({id: id,
  earlier: [n IN earlier | n {.id, .owner, .session_id, .speaker, .role, .text, .batch_index,
      timestamp_us: n.timestamp.epochSeconds * 1000000 + n.timestamp.microsecond,
      recorded_at_us: n.recorded_at.epochSeconds * 1000000 + n.recorded_at.microsecond}],
  message: m {.id, .owner, .session_id, .speaker, .role, .text, .batch_index,
      timestamp_us: m.timestamp.epochSeconds * 1000000 + m.timestamp.microsecond,
      recorded_at_us: m.recorded_at.epochSeconds * 1000000 + m.recorded_at.microsecond},
  later: [n IN later | n {.id, .owner, .session_id, .speaker, .role, .text, .batch_index,
      timestamp_us: n.timestamp.epochSeconds * 1000000 + n.timestamp.microsecond,
      recorded_at_us: n.recorded_at.epochSeconds * 1000000 + n.recorded_at.microsecond}]}) AS windows
