// Purpose: an owner's topic tree: its categories (kind 'category': clusters of its documents at
//   level 1, parts of one at level 2), each with its parent, label, counts and times; then, with
//   $headings, each filed document's own heading tree below them (kind 'heading'): a top-level
//   section under the deepest category its document is filed in (its IN_TOPIC link), each
//   subsection under its section. A heading's id is its section's, its label the heading, its
//   level counted on from its category's (the category's level plus the heading's depth).
// Parameters: $tenant, $owner, $headings (bool)
// Columns: t (topic properties without the centroid and the index fields)
CALL () {
  MATCH (t:Topic {tenant: $tenant, owner: $owner})
  RETURN t {.*, embedding: null, search_text: null, scope: null,
            kind: coalesce(t.kind, 'category')} AS t
  UNION ALL
  MATCH (top:Section {tenant: $tenant, owner: $owner})-[:IN_TOPIC]->(c:Topic)
  WHERE $headings
  MATCH (d:Document {tenant: $tenant, id: top.document_id})
  MATCH (s:Section)-[:SUBSECTION_OF*0..]->(top)
  RETURN {id: s.id, owner: s.owner, kind: 'heading', level: c.level + size(s.path),
          parent: coalesce(s.parent, c.id), label: s.title, documents: 1, document: d.id,
          key: d.key, first_at: d.valid_from, last_at: d.valid_from} AS t
}
RETURN t
ORDER BY t.level, t.kind DESC, t.documents DESC, t.id
