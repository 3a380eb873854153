// Purpose: turn windows (:Window, a stretch of 3 or 5 consecutive turns of a session, built by
//   formation, -[:COVERS]-> its messages): uniqueness of ids per tenant, the owner/session filter,
//   and the recall indexes: window_vector (on the embedded window text) is in schema/vector/,
//   window_fulltext in 09_fulltext_scope.
// Parameters: none. Columns: none. Idempotent.
CREATE CONSTRAINT window_key IF NOT EXISTS
FOR (w:Window) REQUIRE (w.tenant, w.id) IS UNIQUE;

CREATE INDEX window_session IF NOT EXISTS
FOR (w:Window) ON (w.tenant, w.owner, w.session_id);
