// Purpose: the links of restored facts (graphmem/facts/restore.py), as they were recorded:
//   SUPPORTED_BY to their messages and facts and SUPERSEDES to the versions they revised, each
//   with its stored properties (times, reason, source). A source or version not in this tenant
//   is not linked (it was not restored). Linking twice changes nothing (MERGE).
// Parameters: $tenant, $sources (maps {from, to, props}), $supersedes (maps {from, to, props})
// Columns: supported (SUPPORTED_BY edges made or found), superseded (SUPERSEDES edges)
CALL () {
  UNWIND $sources AS l
  MATCH (f:Fact {tenant: $tenant, id: l.from})
  OPTIONAL MATCH (m:Message {tenant: $tenant, id: l.to})
  OPTIONAL MATCH (g:Fact {tenant: $tenant, id: l.to})
  WITH f, l, coalesce(m, g) AS n WHERE n IS NOT NULL
  MERGE (f)-[r:SUPPORTED_BY]->(n)
  SET r += l.props
  RETURN count(r) AS supported
}
CALL () {
  UNWIND $supersedes AS l
  MATCH (f:Fact {tenant: $tenant, id: l.from}), (old:Fact {tenant: $tenant, id: l.to})
  MERGE (f)-[r:SUPERSEDES]->(old)
  SET r += l.props
  RETURN count(r) AS superseded
}
RETURN supported, superseded
