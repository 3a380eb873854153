// Purpose: forget an owner, one bounded step at a time (callers repeat until nothing is left).
//   Deletes up to $limit nodes of each kind owned by $owner in $tenant, with their relationships:
//   sentences, messages, sessions, facts (and their chain keys), episodes (and formation locks),
//   formation jobs, turn windows, procedural memory (traces, steps, cases, clusters, skills),
//   entities (with their MENTIONS edges; only once no message of the owner is left, so a step
//   never takes a hub entity with all its edges), documents (versions, sections, chunks, locks)
//   and topics.
// Parameters: $tenant, $owner, $limit
// Columns: sentences, messages, sessions, facts, episodes, jobs, windows, procedural,
//   entities, documents, bookkeeping (how many of each this step deleted)
CALL () {
  MATCH (s:Sentence {tenant: $tenant, owner: $owner})
  WITH s LIMIT $limit
  DETACH DELETE s
  RETURN count(*) AS sentences
}
CALL () {
  MATCH (m:Message {tenant: $tenant, owner: $owner})
  WITH m LIMIT $limit
  DETACH DELETE m
  RETURN count(*) AS messages
}
CALL () {
  MATCH (x:Session {tenant: $tenant, owner: $owner})
  WITH x LIMIT $limit
  DETACH DELETE x
  RETURN count(*) AS sessions
}
CALL () {
  MATCH (f:Fact {tenant: $tenant, owner: $owner})
  WITH f LIMIT $limit
  DETACH DELETE f
  RETURN count(*) AS facts
}
CALL () {
  MATCH (e:Episode {tenant: $tenant, owner: $owner})
  WITH e LIMIT $limit
  DETACH DELETE e
  RETURN count(*) AS episodes
}
CALL () {
  MATCH (j:Job {tenant: $tenant, owner: $owner})
  WITH j LIMIT $limit
  DETACH DELETE j
  RETURN count(*) AS jobs
}
CALL () {
  MATCH (w:Window {tenant: $tenant, owner: $owner})
  WITH w LIMIT $limit
  DETACH DELETE w
  RETURN count(*) AS windows
}
CALL () {
  MATCH (p:Trace|Step|Case|Cluster|Skill|ProceduralLock {tenant: $tenant, owner: $owner})
  WITH p LIMIT $limit
  DETACH DELETE p
  RETURN count(*) AS procedural
}
CALL () {
  // entities last, once the owner's messages are gone (their MENTIONS edges went with them): an
  // entity of a large owner is a hub, and deleting it first would take all its edges in one step
  MATCH (n:Entity {tenant: $tenant, owner: $owner})
  WHERE NOT EXISTS { MATCH (:Message {tenant: $tenant, owner: $owner}) }
  WITH n LIMIT $limit
  DETACH DELETE n
  RETURN count(*) AS entities
}
CALL () {
  MATCH (d:Chunk|Section|Document|DocumentLock|Topic {tenant: $tenant, owner: $owner})
  WITH d LIMIT $limit
  DETACH DELETE d
  RETURN count(*) AS documents
}
CALL () {
  MATCH (k:FactKey|FormationLock {tenant: $tenant, owner: $owner})
  WITH k LIMIT $limit
  DETACH DELETE k
  RETURN count(*) AS bookkeeping
}
RETURN sentences, messages, sessions, facts, episodes, jobs, windows, procedural, entities,
       documents, bookkeeping
