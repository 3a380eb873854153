// Purpose: the neighbourhood of each hit along NEXT: up to $before earlier and $after later
//   messages of the same session (at most 21 each way), with the messages themselves, so that
//   expansion needs no second round trip.
// Parameters: $tenant, $ids, $before, $after, $as_of (nullable: only neighbours whose event
//   time is at or before it)
// Columns (one row): windows (a list with one map per hit found: id (the hit), earlier (the ids
//   of the messages before it, oldest first), later (the ids of the messages after it, in
//   order)); messages (each message of the windows once, hits included, as a list: id, owner,
//   session_id, speaker, role, text, batch_index, timestamp_us, recorded_at_us, metadata_json,
//   metadata_pairs (graphmem/messages/metadata.py); times as microseconds since the epoch: the driver
//   reads a datetime ~50x slower than an integer).
//   Lists, not maps, and each message once although windows overlap: 91 messages read instead
//   of 114 for 20 LoCoMo hits, and no key names sent with every message (API CPU 0.58 -> 0.46
//   ms, Neo4j 1.44 -> 1.19 ms for queries/recall/windows_near). One row, not one per hit: the driver
//   reads a record ~40 us slower than a list item.
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
CALL (m) {
  OPTIONAL MATCH pb = (m)<-[:NEXT*1..21]-(:Message)
  WHERE length(pb) <= $before
    AND ($as_of IS NULL OR all(n IN nodes(pb) WHERE n.timestamp <= $as_of))
  RETURN pb ORDER BY length(pb) DESC LIMIT 1
}
CALL (m) {
  OPTIONAL MATCH pa = (m)-[:NEXT*1..21]->(:Message)
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
