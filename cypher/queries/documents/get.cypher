// Purpose: one document version by id, every version of its key (newest first) and its
//   sections in order.
// Parameters: $tenant, $id
// Columns: d (the version, its text included), versions (list of versions, newest first,
//   without text), sections (list of section properties, in order)
MATCH (d:Document {tenant: $tenant, id: $id})
CALL (d) {
  MATCH (v:Document {tenant: $tenant, owner: d.owner, key: d.key})
  WITH v ORDER BY v.version DESC
  RETURN collect(v {.*, text: null}) AS versions
}
CALL (d) {
  OPTIONAL MATCH (s:Section {tenant: $tenant, document_id: d.id})
  WITH s ORDER BY s.order
  RETURN collect(s {.*}) AS sections
}
RETURN d {.*} AS d, versions, sections
