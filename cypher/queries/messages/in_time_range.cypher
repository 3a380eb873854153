// Purpose: which of the given messages fall in an event-time range: sent in it, or referring to
//   a day in it (event_starts / event_ends, resolved at ingest). Used when a query names a time.
// Parameters: $tenant, $ids, $start (datetime), $end (datetime, exclusive)
// Columns: ids (one row: the ids of those in the range)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
WHERE ($start <= m.timestamp < $end)
   OR any(i IN range(0, size(coalesce(m.event_starts, [])) - 1)
          WHERE date(m.event_starts[i]) < date($end) AND date(m.event_ends[i]) >= date($start))
RETURN collect(m.id) AS ids
