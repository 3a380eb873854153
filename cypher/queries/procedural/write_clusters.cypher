// Purpose: replace an owner's clusters: the old :Cluster nodes go, the new ones are created with
//   (:Case)-[:IN_CLUSTER]->(:Cluster), and each case's `cluster` property is set.
// Parameters: $tenant, $owner, $now (datetime), $clusters: list of maps {id, size, successes,
//   failures, caption, members (case ids)}
// Columns: clusters (how many were created)
CALL () {
  MATCH (old:Cluster {tenant: $tenant, owner: $owner})
  DETACH DELETE old
  RETURN count(*) AS removed
}
CALL () {
  UNWIND $clusters AS row
  CREATE (k:Cluster {tenant: $tenant, id: row.id, owner: $owner, size: row.size,
                     successes: row.successes, failures: row.failures, caption: row.caption,
                     formed_at: $now})
  WITH k, row
  CALL (k, row) {
    UNWIND row.members AS cid
    MATCH (c:Case {tenant: $tenant, id: cid})
    SET c.cluster = k.id
    CREATE (c)-[:IN_CLUSTER]->(k)
    RETURN count(*) AS members
  }
  RETURN count(*) AS clusters
}
RETURN clusters
