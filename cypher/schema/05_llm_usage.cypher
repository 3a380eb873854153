// Purpose: LLM token accounting (:LLMUsage, one node per tenant, day, operation and model, with
//   running sums; see graphmem/store/usage.py). The uniqueness makes concurrent first calls of a
//   day merge into one node; its index also serves a tenant's day ranges.
// Parameters: none. Columns: none. Idempotent (IF NOT EXISTS).
CREATE CONSTRAINT llm_usage_key IF NOT EXISTS
FOR (u:LLMUsage) REQUIRE (u.tenant, u.day, u.operation, u.model) IS UNIQUE;
