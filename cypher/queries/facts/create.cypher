// Purpose: create one fact node (an Observation or a ProfileFact; both are :Fact).
// Parameters: $tenant, $id, $kind ('observation' | 'profile'), $props (map of its properties),
//   $scope (the owner's fulltext scope, graphmem/store/scope.py)
// Columns: id (none when a fact with this id exists already: the caller reports a conflict)
OPTIONAL MATCH (old:Fact {tenant: $tenant, id: $id})
WITH old WHERE old IS NULL
CREATE (f:Fact {tenant: $tenant, id: $id})
SET f += $props, f.kind = $kind, f.scope = $scope,
    f.caption = $props.subject + ' · ' + $props.type + ': ' + CASE
      WHEN $props.content IS NULL THEN '(deleted)'
      WHEN size($props.content) > 50 THEN left($props.content, 47) + '...'
      ELSE $props.content END
FOREACH (_ IN CASE WHEN $kind = 'observation' THEN [1] ELSE [] END | SET f:Observation)
FOREACH (_ IN CASE WHEN $kind = 'profile' THEN [1] ELSE [] END | SET f:ProfileFact)
RETURN f.id AS id
