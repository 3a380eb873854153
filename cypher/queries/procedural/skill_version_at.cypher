// Purpose: the version of skill $id's lineage valid at $t as recorded by $known (bitemporal, as
//   for facts): versions recorded by $known, each closed only by a supersession recorded by
//   $known; $t defaults to $known. No row when no version was valid then.
// Parameters: $tenant, $id, $t (datetime or null), $known (datetime or null; not both null)
// Columns: id
MATCH (x:Skill {tenant: $tenant, id: $id})
MATCH (s:Skill {tenant: $tenant, lineage: x.lineage})
WHERE ($known IS NULL OR s.recorded_at <= $known)
  AND s.valid_from <= coalesce($t, $known)
  AND (s.valid_to IS NULL OR coalesce(s.invalidated_at > $known, false)
       OR coalesce($t, $known) < s.valid_to)
RETURN s.id AS id
ORDER BY s.version DESC
LIMIT 1
