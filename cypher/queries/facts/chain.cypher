// Purpose: every stored fact of one chain (owner, subject, type), for the Linker.
// Parameters: $tenant, $kind, $owner, $subject, $type
// Columns: id, content (normalised; null for a tombstone), valid_from, valid_to
MATCH (f:Fact {tenant: $tenant, kind: $kind, owner: $owner, subject: $subject, type: $type})
RETURN f.id AS id, f.content_norm AS content, f.valid_from AS valid_from, f.valid_to AS valid_to
