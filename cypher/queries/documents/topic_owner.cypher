// Purpose: the owner of a topic: a category (a Topic node) or a heading (a section of a document
//   filed in the owner's tree, by the section's id).
// Parameters: $tenant, $id
// Columns: owner
CALL () {
  MATCH (t:Topic {tenant: $tenant, id: $id})
  RETURN t.owner AS owner
  UNION ALL
  MATCH (s:Section {tenant: $tenant, id: $id})-[:SUBSECTION_OF*0..]->(:Section)-[:IN_TOPIC]->
        (:Topic)
  RETURN s.owner AS owner
}
RETURN owner
LIMIT 1
