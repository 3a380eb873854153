// Purpose: drop one fulltext index built before the scope (the schema files create it anew).
// Parameters: $index (the index name)
// Columns: none
DROP INDEX $index IF EXISTS
