// Purpose: the neighbourhood of each hit along NEXT: up to $before earlier and $after later
//   messages of the same session (at most 21 each way), with the messages themselves, so that
//   expansion needs no second round trip.
// Parameters: $tenant, $ids, $before, $after
// Columns: windows (one row: a list with one map per hit found: id (the hit), earlier (messages
//   before it, oldest first), message (the hit), later (messages after it, in order); each
//   message a map without vectors, its times as microseconds since the epoch (timestamp_us,
//   recorded_at_us: the driver reads a datetime ~50x slower than an integer); one row, not one
//   per hit: the driver reads a record ~40 us slower than a list item)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
CALL (m) {
  OPTIONAL MATCH pb = (m)<-[:NEXT*1..21]-(:Message)
  WHERE length(pb) <= $before
  RETURN pb ORDER BY length(pb) DESC LIMIT 1
}
CALL (m) {
  OPTIONAL MATCH pa = (m)-[:NEXT*1..21]->(:Message)
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
