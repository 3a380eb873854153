// Purpose: forget facts: each goes with its SUPPORTED_BY and SUPERSEDES edges. The facts it
//   superseded stay closed and the facts that superseded it stay as they are (history is not
//   rewritten: a forgotten value leaves a gap, never a value brought back). A chain key left
//   without facts goes too (it names the subject and type).
// Parameters: $tenant, $ids
// Columns: facts, supersessions (SUPERSEDES edges removed with them), keys
CALL () {
  UNWIND $ids AS fid
  MATCH (f:Fact {tenant: $tenant, id: fid})
  WITH DISTINCT f
  WITH f, {kind: f.kind, owner: f.owner, subject: f.subject, type: f.type} AS key,
       COUNT { (f)-[:SUPERSEDES]-() } AS edges
  DETACH DELETE f
  RETURN collect(DISTINCT key) AS keys, count(*) AS facts, sum(edges) AS supersessions
}
CALL (keys) {
  UNWIND keys AS k
  MATCH (key:FactKey {tenant: $tenant, kind: k.kind, owner: k.owner, subject: k.subject,
                      type: k.type})
  WHERE NOT EXISTS {
    MATCH (g:Fact {tenant: $tenant, owner: k.owner, subject: k.subject, type: k.type})
    WHERE g.kind = k.kind
  }
  DETACH DELETE key
  RETURN count(*) AS removed_keys
}
RETURN facts, supersessions, removed_keys AS keys
