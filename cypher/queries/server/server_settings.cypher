// Purpose: the values of some of the server's settings (e.g. heap and page cache, reported by
//   `graphmem bench scale`). Needs the privilege to see settings (an admin; Aura may refuse).
// Parameters: $names (list of setting names)
// Columns: name, value
SHOW SETTINGS YIELD name, value
WHERE name IN $names
RETURN name, value
