// Purpose: uniqueness of ids. Ids are unique per tenant, so two tenants may use the same client id.
// Parameters: none. Columns: none. Idempotent (IF NOT EXISTS).
CREATE CONSTRAINT message_key IF NOT EXISTS
FOR (m:Message) REQUIRE (m.tenant, m.id) IS UNIQUE;

CREATE CONSTRAINT session_key IF NOT EXISTS
FOR (s:Session) REQUIRE (s.tenant, s.owner, s.session_id) IS UNIQUE;

CREATE CONSTRAINT sentence_key IF NOT EXISTS
FOR (s:Sentence) REQUIRE (s.tenant, s.id) IS UNIQUE;

CREATE CONSTRAINT meta_key IF NOT EXISTS
FOR (g:GraphMeta) REQUIRE g.key IS UNIQUE;

CREATE CONSTRAINT fact_key IF NOT EXISTS
FOR (f:Fact) REQUIRE (f.tenant, f.id) IS UNIQUE;

CREATE CONSTRAINT fact_chain_key IF NOT EXISTS
FOR (k:FactKey) REQUIRE (k.tenant, k.kind, k.owner, k.subject, k.type) IS UNIQUE;

CREATE CONSTRAINT fact_type_key IF NOT EXISTS
FOR (t:FactType) REQUIRE (t.tenant, t.kind, t.name) IS UNIQUE;

CREATE CONSTRAINT episode_key IF NOT EXISTS
FOR (e:Episode) REQUIRE (e.tenant, e.id) IS UNIQUE;

CREATE CONSTRAINT formation_lock_key IF NOT EXISTS
FOR (l:FormationLock) REQUIRE (l.tenant, l.owner, l.session_id) IS UNIQUE;
