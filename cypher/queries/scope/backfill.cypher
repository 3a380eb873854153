// Purpose: set the scope of every fulltext-indexed node that has none, in transactions of
//   $batch nodes (run auto-commit). Every tenant: a migration.
// Parameters: $scopes (map: tenant -> owner -> scope token), $batch (int)
// Columns: none
MATCH (n:Message|Fact|Episode|Window|Case|Skill)
WHERE n.scope IS NULL AND n.search_text IS NOT NULL
  AND n.tenant IS NOT NULL AND n.owner IS NOT NULL
CALL (n) {
  SET n.scope = $scopes[n.tenant][n.owner]
} IN TRANSACTIONS OF $batch ROWS
