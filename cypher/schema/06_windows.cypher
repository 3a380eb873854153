// Purpose: turn windows (:Window, a stretch of 3 or 5 consecutive turns of a session, built by
//   formation, -[:COVERS]-> its messages): uniqueness of ids per tenant, the owner/session filter,
//   and the recall indexes window_vector (cosine, on the embedded window text) and
//   window_fulltext (english analyser, on the window's "speaker: text" lines).
// Parameters: $dimensions (int, the embedder's output size). Columns: none. Idempotent.
CREATE CONSTRAINT window_key IF NOT EXISTS
FOR (w:Window) REQUIRE (w.tenant, w.id) IS UNIQUE;

CREATE INDEX window_session IF NOT EXISTS
FOR (w:Window) ON (w.tenant, w.owner, w.session_id);

CREATE VECTOR INDEX window_vector IF NOT EXISTS
FOR (w:Window) ON w.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};

CREATE FULLTEXT INDEX window_fulltext IF NOT EXISTS
FOR (w:Window) ON EACH [w.search_text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};
