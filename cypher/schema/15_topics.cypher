// Purpose: the topics' label index: topic_fulltext over each Topic's search_text (its label, its
//   keyphrases and the summary an LLM wrote, if any) and scope (its tenant and owner, as in
//   09_fulltext_scope), so chunk search can match the query against an owner's topic labels.
//   Topics written before it get both properties from the migration in
//   graphmem/store/topic_index.py.
// Parameters: none. Columns: none. Idempotent.
CREATE FULLTEXT INDEX topic_fulltext IF NOT EXISTS
FOR (t:Topic) ON EACH [t.search_text, t.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};
