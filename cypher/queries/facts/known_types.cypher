// Purpose: the stored cardinality of fact types (types never used yet have no row).
// Parameters: $tenant, $kind, $names
// Columns: name, cardinality
MATCH (ft:FactType {tenant: $tenant, kind: $kind})
WHERE ft.name IN $names
RETURN ft.name AS name, ft.cardinality AS cardinality
