// Purpose: the Neo4j server's version (the store picks its vector schema and query variants by it:
//   Cypher 25 SEARCH with in-index filters from 2026.01 on).
// Parameters: none
// Columns: version (e.g. "5.26.30", "2026.08.1")
CALL dbms.components() YIELD name, versions
WITH name, versions WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version
