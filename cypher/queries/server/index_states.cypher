// Purpose: the state of every index (start-up waits until all are ONLINE).
// Parameters: none
// Columns: name, type, state, labels, properties, options
SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties, options
RETURN name, type, state, labelsOrTypes AS labels, properties, options
