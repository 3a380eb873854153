// Purpose: make episodes whose extraction ended with the given status (e.g. 'all_dropped':
//   the model proposed facts and every one was dropped) extractable again, so the next
//   formation run of their session extracts them anew (with another prompt or model).
//   Facts already written stay; the Linker merges a fact proposed again into its chain.
// Parameters: $tenant, $owner (or null: every owner), $status
// Columns: id, session_id, owner (the episodes reset)
MATCH (e:Episode {tenant: $tenant})
WHERE e.extraction_status = $status AND ($owner IS NULL OR e.owner = $owner)
SET e.extracted_at = null
RETURN e.id AS id, e.session_id AS session_id, e.owner AS owner
ORDER BY owner, session_id, id
