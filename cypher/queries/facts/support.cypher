// Purpose: link a fact to its sources (messages, other facts, episodes) with SUPPORTED_BY;
//   a source already linked is not linked twice.
// Parameters: $tenant, $id, $sources (ids), $now, $batch
// Columns: linked (how many SUPPORTED_BY edges exist now for these sources)
MATCH (f:Fact {tenant: $tenant, id: $id})
CALL (f) {
  UNWIND $sources AS sid
  MATCH (n:Message {tenant: $tenant, id: sid})
  MERGE (f)-[r:SUPPORTED_BY]->(n) ON CREATE SET r.at = $now, r.batch = $batch
}
CALL (f) {
  UNWIND $sources AS sid
  MATCH (n:Fact {tenant: $tenant, id: sid})
  MERGE (f)-[r:SUPPORTED_BY]->(n) ON CREATE SET r.at = $now, r.batch = $batch
}
CALL (f) {
  UNWIND $sources AS sid
  MATCH (n:Episode {tenant: $tenant, id: sid})
  MERGE (f)-[r:SUPPORTED_BY]->(n) ON CREATE SET r.at = $now, r.batch = $batch
}
RETURN COUNT { (f)-[:SUPPORTED_BY]->() } AS linked
