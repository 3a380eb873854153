// Purpose: the cardinality of each fact type of a tenant, fixed at first use.
// Parameters: $tenant, $now, $types: list of {kind, name, cardinality}
// Columns: kind, name, cardinality (as stored), asked (what this request asked for)
UNWIND $types AS t
MERGE (ft:FactType {tenant: $tenant, kind: t.kind, name: t.name})
  ON CREATE SET ft.cardinality = t.cardinality, ft.created_at = $now
RETURN t.kind AS kind, t.name AS name, ft.cardinality AS cardinality, t.cardinality AS asked
