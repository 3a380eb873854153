// Purpose: the neighbourhood of each hit along NEXT: up to $before earlier and $after later
//   messages of the same session (at most 21 each way).
// Parameters: $tenant, $ids, $before, $after
// Columns: id (the hit), earlier (ids before it, oldest first), later (ids after it, in order)
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
RETURN id,
  CASE WHEN pb IS NULL THEN [] ELSE reverse([n IN nodes(pb) | n.id][1..]) END AS earlier,
  CASE WHEN pa IS NULL THEN [] ELSE [n IN nodes(pa) | n.id][1..] END AS later
