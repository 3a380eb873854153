// Purpose: one topic of an owner's tree with its members and its children. A category (a Topic
//   node): its member documents (current versions), its subtopics, and, below a category with
//   no subtopic, the top-level sections of its documents (their heading trees). A heading (a
//   Section of a filed document, by the section's id, as topics.cypher lists it): its document
//   and its subsections.
// Parameters: $tenant, $id, $limit (members and children at most)
// Columns: t (topic properties without the centroid and the index fields), members (list of
//   {id, key, title}), children (list of topic ids)
CALL () {
  MATCH (t:Topic {tenant: $tenant, id: $id})
  CALL (t) {
    OPTIONAL MATCH (d:Document)-[:IN_TOPIC]->(t)
    WITH d ORDER BY d.key LIMIT $limit
    RETURN collect(d {.id, .key, .title}) AS members
  }
  CALL (t) {
    OPTIONAL MATCH (c:Topic)-[:SUBTOPIC_OF]->(t)
    WITH c ORDER BY c.id
    RETURN collect(c.id) AS subtopics
  }
  CALL (t) {
    OPTIONAL MATCH (s:Section)-[:IN_TOPIC]->(t)
    WITH s ORDER BY s.document_id, s.order LIMIT $limit
    RETURN collect(s.id) AS headings
  }
  RETURN t {.*, embedding: null, search_text: null, scope: null,
            kind: coalesce(t.kind, 'category')} AS t, members,
         (subtopics + headings)[..$limit] AS children
  UNION ALL
  MATCH (s:Section {tenant: $tenant, id: $id})-[:SUBSECTION_OF*0..]->(top:Section)-[:IN_TOPIC]->
        (c:Topic)
  MATCH (d:Document {tenant: $tenant, id: s.document_id})
  CALL (s) {
    OPTIONAL MATCH (x:Section)-[:SUBSECTION_OF]->(s)
    WITH x ORDER BY x.order LIMIT $limit
    RETURN collect(x.id) AS children
  }
  RETURN {id: s.id, owner: s.owner, kind: 'heading', level: c.level + size(s.path),
          parent: coalesce(s.parent, c.id), label: s.title, documents: 1, document: d.id,
          key: d.key, first_at: d.valid_from, last_at: d.valid_from} AS t,
         [d {.id, .key, .title}] AS members, children
}
RETURN t, members, children
LIMIT 1
