// Purpose: an owner's topic tree: every category (its documents clustered; level 1, parts of one
//   at level 2) with its parent, label (keyphrases, or an LLM's when one labelled it), number of
//   documents, first and last times, and a few of its documents' titles; below them each filed
//   document's own headings (kind heading: a top-level section under the deepest category of its
//   document, a subsection under its section; the section's id, its heading as the label).
// Parameters: $tenant (string), $owner (string)
// Columns: level, kind, id, parent, label, documents, first_at, last_at, titles
// Example: :param tenant => 'demo'; :param owner => 'alice'
CALL () {
  MATCH (t:Topic {tenant: $tenant, owner: $owner})
  OPTIONAL MATCH (d:Document)-[:IN_TOPIC]->(t)
  WITH t, collect(coalesce(d.title, d.key))[..5] AS titles
  RETURN t.level AS level, 'category' AS kind, t.id AS id, t.parent AS parent,
         t.label AS label, t.documents AS documents, t.first_at AS first_at,
         t.last_at AS last_at, titles
  UNION ALL
  MATCH (top:Section {tenant: $tenant, owner: $owner})-[:IN_TOPIC]->(c:Topic)
  MATCH (d:Document {tenant: $tenant, id: top.document_id})
  MATCH (s:Section)-[:SUBSECTION_OF*0..]->(top)
  RETURN c.level + size(s.path) AS level, 'heading' AS kind, s.id AS id,
         coalesce(s.parent, c.id) AS parent, s.title AS label, 1 AS documents,
         d.valid_from AS first_at, d.valid_from AS last_at, [coalesce(d.title, d.key)] AS titles
}
RETURN level, kind, id, parent, label, documents, first_at, last_at, titles
ORDER BY level, kind DESC, documents DESC, id
