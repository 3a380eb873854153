// Purpose: current skills whose support turned negative (more failed than successful cases), or
//   that are flagged because their recent executions failed: to be looked at, never deleted.
// Parameters: $tenant (string)
// Columns: id, owner, name, successes, failures, flagged, flag_reason
// Example: :param tenant => 'demo'
MATCH (s:Skill {tenant: $tenant})
WHERE s.invalidated_at IS NULL AND (s.failures > s.successes OR s.flagged)
RETURN s.id AS id, s.owner AS owner, s.name AS name, s.successes AS successes,
       s.failures AS failures, s.flagged AS flagged, s.flag_reason AS flag_reason
ORDER BY s.failures - s.successes DESC, id
