// Purpose: the recall indexes (fact_*: observations and profile facts; episode_*: episodes).
//   sentence_vector: cosine vector index on Sentence.embedding (sentence-level units, each PART_OF
//     its message; the benchmark chose them: see README "Retrieval units"). Dimension from the embedder.
//   message_fulltext: english-analysed fulltext index on Message.search_text (speaker and text).
// Parameters: $dimensions (int, the embedder's output size). Columns: none. Idempotent.
CREATE VECTOR INDEX sentence_vector IF NOT EXISTS
FOR (s:Sentence) ON s.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};

CREATE FULLTEXT INDEX message_fulltext IF NOT EXISTS
FOR (m:Message) ON EACH [m.search_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE VECTOR INDEX fact_vector IF NOT EXISTS
FOR (f:Fact) ON f.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};

CREATE FULLTEXT INDEX fact_fulltext IF NOT EXISTS
FOR (f:Fact) ON EACH [f.search_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE VECTOR INDEX episode_vector IF NOT EXISTS
FOR (e:Episode) ON e.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};

CREATE FULLTEXT INDEX episode_fulltext IF NOT EXISTS
FOR (e:Episode) ON EACH [e.search_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};
