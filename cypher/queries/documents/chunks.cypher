// Purpose: chunks by id with their citation (document version, key, title, section path,
//   offsets), and, with $reach > 0, their neighbours within $reach chunks of the same section.
// Parameters: $tenant, $ids, $reach (int, 0 for none)
// Columns: chunks (list of {id, document_id, key, version, title, section, start, end, text,
//   ordinal, section_id, hit, valid_from_us: its version's valid_from in microseconds since the
//   epoch})
MATCH (c:Chunk {tenant: $tenant})
WHERE c.id IN $ids
CALL (c) {
  MATCH (x:Chunk {tenant: $tenant, document_id: c.document_id})
  WHERE $reach > 0 AND x.ordinal <> c.ordinal AND abs(x.ordinal - c.ordinal) <= $reach
    AND coalesce(x.section_id, '') = coalesce(c.section_id, '')
  RETURN collect(x) AS near
}
WITH collect(c) + reduce(acc = [], n IN collect(near) | acc + n) AS found
UNWIND found AS x
WITH DISTINCT x
RETURN collect({id: x.id, document_id: x.document_id, key: x.key, version: x.version,
  title: x.title, section: x.section_path, start: x.start, end: x.end, text: x.text,
  ordinal: x.ordinal, section_id: x.section_id, hit: x.id IN $ids,
  valid_from_us: x.valid_from.epochSeconds * 1000000 + x.valid_from.microsecond}) AS chunks
