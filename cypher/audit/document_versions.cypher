// Purpose: a document's versions: every version of the owner's key of this document, oldest
//   first, with its validity, state, size and what superseded it, when and why.
// Parameters: $tenant (string), $id (string)
// Columns: version, id, key, title, valid_from, valid_to, recorded_at, state, chars, chunks,
//   superseded_by, reason
// Example: :param tenant => 'demo'; :param id => 'd-...-v1'
MATCH (x:Document {tenant: $tenant, id: $id})
MATCH (d:Document {tenant: $tenant, owner: x.owner, key: x.key})
OPTIONAL MATCH (d)<-[r:SUPERSEDES]-(by:Document)
RETURN d.version AS version, d.id AS id, d.key AS key, d.title AS title,
       d.valid_from AS valid_from, d.valid_to AS valid_to, d.recorded_at AS recorded_at,
       d.state AS state, d.chars AS chars, d.chunk_count AS chunks, by.id AS superseded_by,
       r.reason AS reason
ORDER BY version
