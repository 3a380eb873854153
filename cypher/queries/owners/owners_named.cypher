// Purpose: the owners.cypher page for a key limited to some owners: of the owners it names,
//   those after $after that have a conversation, a fact or an agent run, by name, each with
//   what they have (sessions, messages, the event time of their latest message, facts, runs).
//   Reads in proportion to the owners named (at most 1000 per key), never the whole tenant.
// Parameters: $tenant, $owners (list of owner names), $after (owner name; '' for the first
//   page), $limit
// Columns: o (owner, sessions, messages, facts, traces; last_message_at_us: the event time of
//   the latest message as microseconds since the epoch, null without messages)
UNWIND $owners AS owner
WITH DISTINCT owner WHERE owner > $after
  AND (EXISTS { MATCH (:Session {tenant: $tenant, owner: owner}) }
       OR EXISTS { MATCH (:FactKey {tenant: $tenant, owner: owner}) }
       OR EXISTS { MATCH (:Trace {tenant: $tenant, owner: owner}) })
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
