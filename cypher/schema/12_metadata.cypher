// Purpose: the messages of an owner with a given metadata value, found without reading the
//   owner's other messages: each message with metadata carries metadata_tokens, one token per
//   (key, value) pair, a hash of tenant, owner and pair (graphmem/messages/metadata.py `tokens`), kept
//   whole by the whitespace analyser. A filter so selective that the vector index's hits hold
//   too few of its messages starts here (queries/recall/vector_search_metadata.cypher).
// Parameters: none. Columns: none. Idempotent (IF NOT EXISTS).
CREATE FULLTEXT INDEX message_metadata IF NOT EXISTS
FOR (m:Message) ON EACH [m.metadata_tokens]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: false}};
