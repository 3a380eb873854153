// Purpose: record that an episode's facts were extracted (by which model, when).
// Parameters: $tenant, $id, $now, $model
// Columns: none
MATCH (e:Episode {tenant: $tenant, id: $id})
SET e.extracted_at = $now, e.extracted_by = $model
