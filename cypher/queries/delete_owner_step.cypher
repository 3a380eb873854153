// Purpose: forget an owner, one bounded step at a time (callers repeat until nothing is left).
//   Deletes up to $limit nodes of each kind owned by $owner in $tenant, with their relationships.
// Parameters: $tenant, $owner, $limit
// Columns: sentences, messages, sessions (how many of each this step deleted)
CALL (){
  MATCH (s:Sentence {tenant: $tenant, owner: $owner})
  WITH s LIMIT $limit
  DETACH DELETE s
  RETURN count(*) AS sentences
}
CALL (){
  MATCH (m:Message {tenant: $tenant, owner: $owner})
  WITH m LIMIT $limit
  DETACH DELETE m
  RETURN count(*) AS messages
}
CALL (){
  MATCH (x:Session {tenant: $tenant, owner: $owner})
  WITH x LIMIT $limit
  DETACH DELETE x
  RETURN count(*) AS sessions
}
RETURN sentences, messages, sessions
