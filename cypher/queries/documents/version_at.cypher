// Purpose: the version of one owner's document key valid at $t (as_of).
// Parameters: $tenant, $owner, $key, $t (datetime)
// Columns: id
MATCH (d:Document {tenant: $tenant, owner: $owner, key: $key})
WHERE d.valid_from <= $t AND (d.valid_to IS NULL OR $t < d.valid_to)
RETURN d.id AS id
ORDER BY d.version DESC
LIMIT 1
