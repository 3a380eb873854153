// Purpose: which of these messages pass a metadata filter: for every key of the filter, one of
//   the message's encoded (key, value) pairs is among those the key accepts (graphmem/metadata.py).
// Parameters: $tenant, $ids (message ids), $metadata (list of lists of encoded pairs, one list
//   per key), e.g. [['["channel","slack"]'], ['["priority",1]', '["priority",2]']]
// Columns: ids (one row: the ids that pass, in no order)
UNWIND $ids AS id
MATCH (m:Message {tenant: $tenant, id: id})
WHERE all(accepted IN $metadata WHERE any(p IN accepted WHERE p IN m.metadata_pairs))
RETURN collect(m.id) AS ids
