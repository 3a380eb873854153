// Purpose: forget one trace (a run): its steps, the cases formed from it, every skill version
//   left without a supporting case (its steps and wording came from those cases only), and the
//   clusters left without cases. Skills that keep other cases stay; the caller enqueues
//   `form_skills` so the owner's clusters and current skills are formed again from what remains.
// Parameters: $tenant, $id
// Columns: steps, cases, skills, clusters
MATCH (t:Trace {tenant: $tenant, id: $id})
CALL () {
  MATCH (s:Skill {tenant: $tenant})-[:SUPPORTED_BY]->(:Case {tenant: $tenant, trace_id: $id})
  WITH DISTINCT s
  WHERE NOT EXISTS {
    MATCH (s)-[:SUPPORTED_BY]->(o:Case {tenant: $tenant})
    WHERE o.trace_id <> $id
  }
  DETACH DELETE s
  RETURN count(s) AS skills
}
CALL () {
  OPTIONAL MATCH (:Case {tenant: $tenant, trace_id: $id})-[:IN_CLUSTER]->(k:Cluster {tenant: $tenant})
  RETURN collect(DISTINCT k) AS touched
}
CALL () {
  OPTIONAL MATCH (c:Case {tenant: $tenant, trace_id: $id})
  DETACH DELETE c
  RETURN count(c) AS cases
}
CALL (touched) {
  UNWIND touched AS k
  WITH k WHERE NOT EXISTS { MATCH (:Case {tenant: $tenant})-[:IN_CLUSTER]->(k) }
  DETACH DELETE k
  RETURN count(k) AS clusters
}
CALL (t) {
  OPTIONAL MATCH (t)-[:HAS_STEP]->(s:Step {tenant: $tenant})
  DETACH DELETE s
  RETURN count(s) AS steps
}
DETACH DELETE t
RETURN steps, cases, skills, clusters
