// Purpose: the sections of some chunks, each scored by the mean similarity of all its chunks to
//   a query vector (a section's node in the collapsed-tree list of chunk search).
// Parameters: $tenant, $ids (chunk ids), $vector
// Columns: id (section id), score (mean cosine, each mapped to [0, 1] as the vector index maps
//   it), chunks (how many chunks the section has), hits (the ids of $ids in it)
MATCH (c:Chunk {tenant: $tenant})
WHERE c.id IN $ids AND c.section_id IS NOT NULL
WITH c.document_id AS document, c.section_id AS section, collect(c.id) AS hits
MATCH (x:Chunk {tenant: $tenant, document_id: document})
WHERE x.section_id = section AND x.embedding IS NOT NULL
WITH section, hits, avg(vector.similarity.cosine(x.embedding, $vector)) AS score,
  count(x) AS chunks
RETURN section AS id, score, chunks, hits
ORDER BY score DESC, id
