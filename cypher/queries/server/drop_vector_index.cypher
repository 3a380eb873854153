// Purpose: drop one vector index by name (the schema step on Neo4j 2026.01+ drops an index of ours
//   built without its filter properties, then creates it again with them: schema/vector/filtered).
// Parameters: $index (the index name). Columns: none.
DROP INDEX $index IF EXISTS
