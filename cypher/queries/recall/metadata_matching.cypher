// Purpose: which of these messages pass a metadata filter (and were sent before $time_to): every clause of the filter (one per
//   key: a value or one of several, none of some, the key there or not, a number in a range)
//   holds for the message's encoded (key, value) pairs (graphmem/messages/metadata.py).
// Parameters: $tenant, $ids (message ids), $time_to (nullable, exclusive event time: with
//   as_of, the instant after it), $metadata (one map per key, graphmem/messages/metadata.py
//   `Clause.param`), e.g. [{prefix: '["channel",', any: ['["channel","slack"]'], none: [],
//   has: null, low: null, high: null}]
// Columns: ids (one row: the ids that pass, in no order)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
WHERE ($time_to IS NULL OR m.timestamp < $time_to)
  AND ($metadata IS NULL OR all(c IN $metadata WHERE
        (c.any IS NULL OR any(p IN c.any WHERE p IN m.metadata_pairs))
        AND none(p IN c.none WHERE p IN coalesce(m.metadata_pairs, []))
        AND (c.has IS NULL
             OR c.has = any(p IN coalesce(m.metadata_pairs, []) WHERE p STARTS WITH c.prefix))
        AND (c.low IS NULL AND c.high IS NULL
             OR any(v IN [p IN coalesce(m.metadata_pairs, []) WHERE p STARTS WITH c.prefix
                          | toFloat(substring(p, size(c.prefix), size(p) - size(c.prefix) - 1))]
                    WHERE (c.low IS NULL OR v >= c.low) AND (c.high IS NULL OR v <= c.high)))))
RETURN collect(m.id) AS ids
