// Purpose: set the scope and search_text of topics written before the label index, and their
//   keyphrases (the label they had: no LLM labelled them yet). Every tenant: a migration.
// Parameters: $rows: list of {tenant, id, scope}
// Columns: topics (how many were set)
UNWIND $rows AS row
MATCH (t:Topic {tenant: row.tenant, id: row.id})
SET t.scope = row.scope, t.search_text = coalesce(t.label, ''),
    t.keyphrases = coalesce(t.keyphrases, t.label), t.kind = coalesce(t.kind, 'category')
RETURN count(t) AS topics
