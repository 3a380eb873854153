// Purpose: what was forgotten in a recorded-time window [$from, $to), in time order: one row
//   per message, session, filtered set of messages (kind 'messages'), trace or fact forgotten,
//   with the SHA-256 of its id (of a session: owner, line feed, session id; of a filter: its
//   canonical JSON), who asked (an API key's id, as the request log shows it; 'cli';
//   'mcp-stdio'; null from the library or before callers were recorded) and how many nodes of
//   each kind went. No content is kept (forgetting an owner is reported by its reply, not
//   here).
// Parameters: $tenant (string), $from (datetime), $to (datetime)
// Columns: at, kind, id_hash, by, messages, sentences, windows, episodes, sessions, facts, steps,
//   cases, skills, clusters
// Example: :param tenant => 'demo'; :param from => datetime('2020-01-01T00:00:00Z'); :param to => datetime('2100-01-01T00:00:00Z')
MATCH (d:Deletion {tenant: $tenant})
WHERE $from <= d.at < $to
RETURN d.at AS at, d.kind AS kind, d.id_hash AS id_hash, d.by AS by,
       coalesce(d.messages, 0) AS messages, coalesce(d.sentences, 0) AS sentences,
       coalesce(d.windows, 0) AS windows, coalesce(d.episodes, 0) AS episodes,
       coalesce(d.sessions, 0) AS sessions, coalesce(d.facts, 0) AS facts,
       coalesce(d.steps, 0) AS steps, coalesce(d.cases, 0) AS cases,
       coalesce(d.skills, 0) AS skills, coalesce(d.clusters, 0) AS clusters
ORDER BY at
