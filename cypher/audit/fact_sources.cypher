// Purpose: the evidence behind a fact, down to the raw messages: its sources, and the sources of
//   facts and episodes it rests on (up to 5 steps).
// Parameters: $tenant (string), $id (string)
// Columns: message_id, speaker, text, timestamp, path (ids from the fact to the message)
// Example: :param tenant => 'demo'; :param id => 'obs-r2'
MATCH (f:Fact {tenant: $tenant, id: $id})
MATCH p = (f)-[:SUPPORTED_BY|DERIVED_FROM*1..5]->(m:Message)
RETURN DISTINCT m.id AS message_id, m.speaker AS speaker, m.text AS text,
       m.timestamp AS timestamp, [n IN nodes(p) | n.id] AS path
ORDER BY timestamp
