// Purpose: embeddings already computed for chunk texts of one owner's document key (any
//   version), by content hash: a new version re-embeds only chunks whose text changed.
// Parameters: $tenant, $owner, $key, $hashes (list of content hashes)
// Columns: hash, embedding (one row per hash found)
MATCH (c:Chunk {tenant: $tenant, owner: $owner, key: $key})
WHERE c.content_hash IN $hashes AND c.embedding IS NOT NULL
WITH c.content_hash AS hash, head(collect(c.embedding)) AS embedding
RETURN hash, embedding
