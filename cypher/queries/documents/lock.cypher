// Purpose: take the write lock of one owner's document key (a DocumentLock node, kept), so that
//   versions of one key are written one at a time, and read its current version, if any.
// Parameters: $tenant, $owner, $key, $now
// Columns: id, version, content_hash, valid_from (of the current version; no row when none)
MERGE (l:DocumentLock {tenant: $tenant, owner: $owner, key: $key})
SET l.at = $now
WITH l
MATCH (d:Document {tenant: $tenant, owner: $owner, key: $key})
WHERE d.current
RETURN d.id AS id, d.version AS version, d.content_hash AS content_hash,
  d.valid_from AS valid_from
