// Purpose: the entities of an owner (names, speakers, months and topics its messages mention,
//   found without an LLM), most mentioned first, each with its mentions over time: the first and
//   last message mentioning it (event time), the mentions per month, and the first messages.
// Parameters: $tenant (string), $owner (string)
// Columns: entity, kind, mentions, first_at, last_at, by_month (pairs [month, mentions]),
//   first_messages (ids of up to 5 messages, oldest first)
// Example: :param tenant => 'demo'; :param owner => 'alice'
MATCH (e:Entity {tenant: $tenant, owner: $owner})
WHERE e.kind <> 'link'  // walk links (graphmem.entities.extract.links) are no entities to list
CALL (e) {
  MATCH (e)<-[:MENTIONS]-(m:Message)
  WITH m ORDER BY m.timestamp, m.id
  WITH collect(m) AS ms
  RETURN size(ms) AS mentions, ms[0].timestamp AS first_at, ms[-1].timestamp AS last_at,
         [x IN ms[..5] | x.id] AS first_messages
}
CALL (e) {
  MATCH (e)<-[:MENTIONS]-(m:Message)
  WITH left(toString(date(m.timestamp)), 7) AS month, count(*) AS n
  ORDER BY month
  RETURN collect([month, n]) AS by_month
}
RETURN e.name AS entity, e.kind AS kind, mentions, first_at, last_at, by_month, first_messages
ORDER BY mentions DESC, entity
