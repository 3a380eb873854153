// Purpose: the learned-sparse recall index (GRAPHMEM_SPARSE=splade-tiny): message_sparse on
//   Message.sparse_text (the message's SPLADE word pieces as tokens p<id>, each repeated in
//   proportion to its weight, written by formation) and Message.scope (the owner's token, see
//   09_fulltext_scope). Whitespace analyser: the tokens are indexed as they are. A message without
//   sparse_text is simply not in it, so the index costs nothing while the option is off.
// Parameters: none. Columns: none. Idempotent.
CREATE FULLTEXT INDEX message_sparse IF NOT EXISTS
FOR (m:Message) ON EACH [m.sparse_text, m.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: false}};
