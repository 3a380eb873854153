// Purpose: link messages to the entities they mention, creating the entities on first mention
//   (MERGE on tenant, owner and name: idempotent, a repeated row adds nothing). An entity keeps
//   the kind it was first seen as; `caption` is what Neo4j Browser shows.
// Parameters: $tenant, $rows: list of {message_id, owner, entities: [{name, kind}]}
// Columns: mentions (rows of (message, entity) handled)
UNWIND $rows AS row
MATCH (m:Message {tenant: $tenant, id: row.message_id})
UNWIND row.entities AS ent
MERGE (e:Entity {tenant: $tenant, owner: row.owner, name: ent.name})
  ON CREATE SET e.kind = ent.kind, e.caption = ent.name
MERGE (m)-[:MENTIONS]->(e)
RETURN count(*) AS mentions
