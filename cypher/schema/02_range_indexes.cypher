// Purpose: range indexes for the filters every query applies (tenant, owner, session, event time).
// Parameters: none. Columns: none. Idempotent (IF NOT EXISTS).
CREATE INDEX message_owner IF NOT EXISTS
FOR (m:Message) ON (m.tenant, m.owner);

CREATE INDEX message_session_time IF NOT EXISTS
FOR (m:Message) ON (m.tenant, m.owner, m.session_id, m.timestamp);

CREATE INDEX message_session IF NOT EXISTS
FOR (m:Message) ON (m.tenant, m.session_id);

CREATE INDEX message_time IF NOT EXISTS
FOR (m:Message) ON (m.timestamp);

CREATE INDEX session_owner IF NOT EXISTS
FOR (s:Session) ON (s.tenant, s.owner);

// an owner's sessions, the latest first (GET /v1/sessions reads just the page)
CREATE INDEX session_recent IF NOT EXISTS
FOR (s:Session) ON (s.tenant, s.owner, s.last_at);

CREATE INDEX sentence_owner IF NOT EXISTS
FOR (s:Sentence) ON (s.tenant, s.owner);

CREATE INDEX fact_chain IF NOT EXISTS
FOR (f:Fact) ON (f.tenant, f.kind, f.owner, f.subject, f.type);

CREATE INDEX fact_owner IF NOT EXISTS
FOR (f:Fact) ON (f.tenant, f.owner);

CREATE INDEX fact_valid_from IF NOT EXISTS
FOR (f:Fact) ON (f.valid_from);

CREATE INDEX episode_owner IF NOT EXISTS
FOR (e:Episode) ON (e.tenant, e.owner, e.reported_at);
