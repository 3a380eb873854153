// Purpose: queries/recall/windows for a short reach ($before and $after at most 3, what the default
//   expansion asks): the same rows, but the variable-length expansion stops at 3 steps each way
//   instead of 21 (Cypher needs literal bounds, and the planner does not stop early at
//   `length(p) <= $before`): about a third fewer database hits for 10 hits.
// Parameters: $tenant, $ids, $before, $after (each 0-3), $as_of (nullable: only neighbours
//   whose event time is at or before it)
// Columns: as queries/recall/windows (one row): windows ({id, earlier, later} per hit found: ids),
//   messages (each message of the windows once, as a list in queries/recall/windows' order)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
CALL (m) {
  OPTIONAL MATCH pb = (m)<-[:NEXT*1..3]-(:Message)
  WHERE length(pb) <= $before
    AND ($as_of IS NULL OR all(n IN nodes(pb) WHERE n.timestamp <= $as_of))
  RETURN pb ORDER BY length(pb) DESC LIMIT 1
}
CALL (m) {
  OPTIONAL MATCH pa = (m)-[:NEXT*1..3]->(:Message)
  WHERE length(pa) <= $after
    AND ($as_of IS NULL OR all(n IN nodes(pa) WHERE n.timestamp <= $as_of))
  RETURN pa ORDER BY length(pa) DESC LIMIT 1
}
WITH id, m,
  CASE WHEN pb IS NULL THEN [] ELSE reverse(nodes(pb)[1..]) END AS earlier,
  CASE WHEN pa IS NULL THEN [] ELSE nodes(pa)[1..] END AS later
WITH collect({id: id, earlier: [n IN earlier | n.id], later: [n IN later | n.id]}) AS windows,
  collect(earlier + [m] + later) AS chains
CALL (chains) {
  UNWIND chains AS chain
  UNWIND chain AS n
  WITH DISTINCT n
  RETURN collect([n.id, n.owner, n.session_id, n.speaker, n.role, n.text, n.batch_index,
    n.timestamp.epochSeconds * 1000000 + n.timestamp.microsecond,
    n.recorded_at.epochSeconds * 1000000 + n.recorded_at.microsecond,
    n.metadata_json, n.metadata_pairs]) AS messages
}
RETURN windows, messages
