// Purpose: an owner's topic tree: every topic, categories first, with its parent, keyphrase
//   label, number of documents, first and last times, and a few of its documents' titles.
// Parameters: $tenant (string), $owner (string)
// Columns: level, id, parent, label, documents, first_at, last_at, titles
// Example: :param tenant => 'demo'; :param owner => 'alice'
MATCH (t:Topic {tenant: $tenant, owner: $owner})
OPTIONAL MATCH (d:Document)-[:IN_TOPIC]->(t)
WITH t, collect(coalesce(d.title, d.key))[..5] AS titles
RETURN t.level AS level, t.id AS id, t.parent AS parent, t.label AS label,
       t.documents AS documents, t.first_at AS first_at, t.last_at AS last_at, titles
ORDER BY level, documents DESC, id
