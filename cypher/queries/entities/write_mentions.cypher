// Purpose: link messages to the entities they mention, creating the entities on first mention
//   (MERGE on tenant, owner and name: idempotent, a repeated row adds nothing). An entity keeps
//   the kind it was first seen as; `caption` is what Neo4j Browser shows. The rows come sorted
//   by (owner, name), and are written in that order: concurrent batches lock shared entities in
//   one order, so they queue instead of deadlocking.
// Parameters: $tenant, $rows: list of {message_id, owner, name, kind}
// Columns: mentions (rows handled)
UNWIND $rows AS row
MATCH (m:Message {tenant: $tenant, id: row.message_id})
MERGE (e:Entity {tenant: $tenant, owner: row.owner, name: row.name})
  ON CREATE SET e.kind = row.kind, e.caption = row.name
MERGE (m)-[:MENTIONS]->(e)
RETURN count(*) AS mentions
