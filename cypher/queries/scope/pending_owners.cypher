// Purpose: the tenants and owners that have fulltext-indexed nodes without a scope (a database
//   built before the scope; see graphmem/store/scope.py). Every tenant: a migration.
// Parameters: none
// Columns: tenant, owner
MATCH (n:Message|Fact|Episode|Window|Case|Skill)
WHERE n.scope IS NULL AND n.search_text IS NOT NULL
  AND n.tenant IS NOT NULL AND n.owner IS NOT NULL
RETURN DISTINCT n.tenant AS tenant, n.owner AS owner
