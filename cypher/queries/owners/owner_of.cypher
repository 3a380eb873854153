// Purpose: the owner of a message, fact or agent run named by its id: a key limited to some
//   owners checks it before it forgets or changes that thing by id. One index seek per kind
//   (each label's (tenant, id) constraint); only the branch of $kind can return a row.
// Parameters: $tenant, $kind (message | fact | trace), $id
// Columns: owner (no row when nothing of that kind has this id in the tenant)
CALL () {
  MATCH (n:Message {tenant: $tenant, id: $id}) WHERE $kind = 'message'
  RETURN n.owner AS owner
  UNION ALL
  MATCH (n:Fact {tenant: $tenant, id: $id}) WHERE $kind = 'fact'
  RETURN n.owner AS owner
  UNION ALL
  MATCH (n:Trace {tenant: $tenant, id: $id}) WHERE $kind = 'trace'
  RETURN n.owner AS owner
}
RETURN owner LIMIT 1
