// Purpose: record that an episode's facts were extracted (by which model, when) and what became
//   of the model's proposals: extraction_status (empty, ok, partial, all_dropped), counts, and
//   the whole report as JSON (dropped per reason, unknown sources, unreadable dates).
// Parameters: $tenant, $id, $now, $model, $status, $proposed, $kept, $dropped (ints),
//   $report (JSON string)
// Columns: none
MATCH (e:Episode {tenant: $tenant, id: $id})
SET e.extracted_at = $now, e.extracted_by = $model, e.extraction_status = $status,
    e.extraction_proposed = $proposed, e.extraction_kept = $kept,
    e.extraction_dropped = $dropped, e.extraction_report = $report
