// Purpose: the audit record of one forgetting: what kind of thing, the SHA-256 of its id (never
//   the id itself, never any content), when, who asked (the caller: an API key's id, 'cli',
//   'mcp-stdio'; null when graphmem is used as a library), and how many nodes of each kind
//   went.
// Parameters: $tenant, $kind ('message' | 'session' | 'messages' | 'trace' | 'fact' |
//   'document'), $id_hash,
//   $at, $by (string or null), $counts (a map of integers, e.g. {messages: 1, sentences: 2})
// Columns: none
CREATE (d:Deletion {tenant: $tenant, kind: $kind, id_hash: $id_hash, at: $at, by: $by})
SET d += $counts, d.caption = 'forgot ' + $kind
