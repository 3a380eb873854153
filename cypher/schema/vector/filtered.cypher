// Purpose: the vector indexes on Neo4j 2026.01 and later: as plain.cypher, plus the filter
//   properties each recall query restricts on inside the index (Cypher 25 SEARCH ... WHERE):
//   tenant and owner everywhere, the window size for window_vector, the fact kind for fact_vector.
//   An index of ours built without these (by graphmem on Neo4j 5, or an older version) is dropped
//   and built again by Store.apply_schema, which reads the WITH lists below.
// Parameters: $dimensions (int, the embedder's output size), $quantized (bool: Neo4j quantises
//   the vectors in the index; Settings.vector_quantization, read when an index is built).
// Columns: none. Idempotent.
CYPHER 25
CREATE VECTOR INDEX sentence_vector IF NOT EXISTS
FOR (s:Sentence) ON s.embedding WITH [s.tenant, s.owner]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CYPHER 25
CREATE VECTOR INDEX fact_vector IF NOT EXISTS
FOR (f:Fact) ON f.embedding WITH [f.tenant, f.owner, f.kind]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CYPHER 25
CREATE VECTOR INDEX episode_vector IF NOT EXISTS
FOR (e:Episode) ON e.embedding WITH [e.tenant, e.owner]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CYPHER 25
CREATE VECTOR INDEX window_vector IF NOT EXISTS
FOR (w:Window) ON w.embedding WITH [w.tenant, w.owner, w.size]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CYPHER 25
CREATE VECTOR INDEX case_vector IF NOT EXISTS
FOR (c:Case) ON c.embedding WITH [c.tenant, c.owner]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CYPHER 25
CREATE VECTOR INDEX skill_vector IF NOT EXISTS
FOR (s:Skill) ON s.embedding WITH [s.tenant, s.owner]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CYPHER 25
CREATE VECTOR INDEX chunk_vector IF NOT EXISTS
FOR (c:Chunk) ON c.embedding WITH [c.tenant, c.owner]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CYPHER 25
CREATE VECTOR INDEX topic_vector IF NOT EXISTS
FOR (t:Topic) ON t.embedding WITH [t.tenant, t.owner]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};
