// Purpose: the owners of a tenant (anyone with a conversation, a fact or an agent run), by
//   name, a page after $after (keyset paging: stable while owners come and go), each with what
//   they have: sessions, messages, the event time of their latest message, facts (every
//   version, history included), runs.
//   Reads in proportion to the page: the index entries of its owners, and their sessions, facts
//   and runs for the counts.
// Parameters: $tenant, $after (owner name; '' for the first page), $limit
// Columns: o (owner, sessions, messages, facts, traces; last_message_at_us: the
//   event time of the latest message as microseconds since the epoch, null without messages)
// Each list reads its (tenant, owner) index in order from $after and stops after $limit
//   owners (ORDER BY tenant, owner: the order the index provides).
CALL () {
  MATCH (s:Session {tenant: $tenant}) USING INDEX s:Session(tenant, owner)
  WHERE s.owner > $after
  WITH s ORDER BY s.tenant, s.owner
  WITH DISTINCT s.owner AS owner LIMIT $limit
  RETURN owner
  UNION
  MATCH (k:FactKey {tenant: $tenant}) USING INDEX k:FactKey(tenant, owner)
  WHERE k.owner > $after
  WITH k ORDER BY k.tenant, k.owner
  WITH DISTINCT k.owner AS owner LIMIT $limit
  RETURN owner
  UNION
  MATCH (t:Trace {tenant: $tenant}) USING INDEX t:Trace(tenant, owner)
  WHERE t.owner > $after
  WITH t ORDER BY t.tenant, t.owner
  WITH DISTINCT t.owner AS owner LIMIT $limit
  RETURN owner
}
WITH owner ORDER BY owner LIMIT $limit
CALL (owner) {
  OPTIONAL MATCH (s:Session {tenant: $tenant, owner: owner})
  RETURN count(s) AS sessions, coalesce(sum(s.message_count), 0) AS messages,
         max(s.last_at) AS last
}
RETURN {owner: owner, sessions: sessions, messages: messages,
        last_message_at_us: last.epochSeconds * 1000000 + last.microsecond,
        facts: COUNT { MATCH (f:Fact {tenant: $tenant, owner: owner}) },
        traces: COUNT { MATCH (t:Trace {tenant: $tenant, owner: owner}) }} AS o
