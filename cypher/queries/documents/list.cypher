// Purpose: an owner's documents: the current version of each key (with $history, every
//   version), by key after $after (keyset paging).
// Parameters: $tenant, $owner, $after (key), $limit, $history (bool)
// Columns: d (document properties without its text)
MATCH (d:Document {tenant: $tenant, owner: $owner})
WHERE d.key > $after AND ($history OR d.current)
RETURN d {.*, text: null} AS d
ORDER BY d.key, d.version DESC
LIMIT $limit
