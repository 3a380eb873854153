// Purpose: the vector indexes on Neo4j 5 (and 2025.x): cosine, dimension from the embedder, no
//   filter properties (queries over-fetch and filter by tenant and owner after the index).
//   sentence_vector: Sentence.embedding (sentence-level units, each PART_OF its message);
//   fact_vector, episode_vector, window_vector, case_vector, skill_vector: the other recall units.
//   Neo4j 2026.01 and later get filtered.cypher instead (Store.apply_schema chooses).
// Parameters: $dimensions (int, the embedder's output size), $quantized (bool: Neo4j quantises
//   the vectors in the index; Settings.vector_quantization, read when an index is built).
// Columns: none. Idempotent.
CREATE VECTOR INDEX sentence_vector IF NOT EXISTS
FOR (s:Sentence) ON s.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CREATE VECTOR INDEX fact_vector IF NOT EXISTS
FOR (f:Fact) ON f.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CREATE VECTOR INDEX episode_vector IF NOT EXISTS
FOR (e:Episode) ON e.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CREATE VECTOR INDEX window_vector IF NOT EXISTS
FOR (w:Window) ON w.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CREATE VECTOR INDEX case_vector IF NOT EXISTS
FOR (c:Case) ON c.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CREATE VECTOR INDEX skill_vector IF NOT EXISTS
FOR (s:Skill) ON s.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CREATE VECTOR INDEX chunk_vector IF NOT EXISTS
FOR (c:Chunk) ON c.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};

CREATE VECTOR INDEX topic_vector IF NOT EXISTS
FOR (t:Topic) ON t.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
  `vector.quantization.enabled`: $quantized}};
