// Purpose: how much an owner has stored (used to report what a delete removed, and by stats).
// Parameters: $tenant, $owner
// Columns: messages, sentences, sessions, facts, episodes
CALL () { MATCH (m:Message {tenant: $tenant, owner: $owner}) RETURN count(m) AS messages }
CALL () { MATCH (s:Sentence {tenant: $tenant, owner: $owner}) RETURN count(s) AS sentences }
CALL () { MATCH (x:Session {tenant: $tenant, owner: $owner}) RETURN count(x) AS sessions }
CALL () { MATCH (f:Fact {tenant: $tenant, owner: $owner}) RETURN count(f) AS facts }
CALL () { MATCH (e:Episode {tenant: $tenant, owner: $owner}) RETURN count(e) AS episodes }
RETURN messages, sentences, sessions, facts, episodes
