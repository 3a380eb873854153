// Purpose: how many jobs there are in each state over EVERY tenant, each count capped at $cap
//   (so a scrape stays cheap on a huge queue). Cross-tenant on purpose: it feeds the operator's
//   /metrics gauge graphmem_jobs{state}; never return it to a tenant (GET /v1/jobs uses counts).
// Parameters: $states (list of state names), $cap (max jobs counted per state)
// Columns: state, jobs
UNWIND $states AS state
CALL (state) {
  MATCH (j:Job)
  WHERE j.state = state
  WITH j LIMIT $cap
  RETURN count(j) AS jobs
}
RETURN state, jobs
