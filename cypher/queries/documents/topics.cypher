// Purpose: an owner's topic tree: every topic with its parent, label, counts and times.
// Parameters: $tenant, $owner
// Columns: t (topic properties without the centroid)
MATCH (t:Topic {tenant: $tenant, owner: $owner})
RETURN t {.*, embedding: null} AS t
ORDER BY t.level, t.documents DESC, t.id
