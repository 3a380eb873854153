// Purpose: entities (:Entity, a name, speaker, month or topic an owner's messages mention,
//   extracted without an LLM; (:Message)-[:MENTIONS]->(:Entity)): one node per tenant, owner and
//   normalised name (the constraint's index also serves the MERGE and the lookups by name).
// Parameters: none. Columns: none. Idempotent (IF NOT EXISTS).
CREATE CONSTRAINT entity_key IF NOT EXISTS
FOR (e:Entity) REQUIRE (e.tenant, e.owner, e.name) IS UNIQUE;
