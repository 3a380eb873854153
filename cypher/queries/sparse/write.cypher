// Purpose: store messages' word pieces (sparse_text, indexed by message_sparse) and the model
//   that made them. A message forgotten meanwhile is simply not matched.
// Parameters: $tenant, $model, $rows: list of {id, text}
// Columns: written
UNWIND $rows AS row
MATCH (m:Message {tenant: $tenant, id: row.id})
SET m.sparse_text = row.text, m.sparse_model = $model
RETURN count(m) AS written
