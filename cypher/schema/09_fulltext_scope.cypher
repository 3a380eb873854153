// Purpose: every fulltext index (english analyser), each on two properties: search_text (what
//   is searched) and scope (a token of the node's tenant and owner, see
//   graphmem/store/scope.py), so that a query reads one owner's nodes only:
//   '+scope:<token>^0 +search_text:(<terms>)'.
//   message_fulltext: Message.search_text (speaker and text); fact_fulltext: observations and
//   profile facts; episode_fulltext: title and narrative; window_fulltext: a turn window's
//   "speaker: text" lines; case_fulltext, skill_fulltext: procedural memory.
//   A database built before the scope is migrated first (scope.migrate drops the old ones).
// Parameters: none. Columns: none. Idempotent.
CREATE FULLTEXT INDEX message_fulltext IF NOT EXISTS
FOR (m:Message) ON EACH [m.search_text, m.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX fact_fulltext IF NOT EXISTS
FOR (f:Fact) ON EACH [f.search_text, f.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX episode_fulltext IF NOT EXISTS
FOR (e:Episode) ON EACH [e.search_text, e.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX window_fulltext IF NOT EXISTS
FOR (w:Window) ON EACH [w.search_text, w.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX case_fulltext IF NOT EXISTS
FOR (c:Case) ON EACH [c.search_text, c.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};

CREATE FULLTEXT INDEX skill_fulltext IF NOT EXISTS
FOR (s:Skill) ON EACH [s.search_text, s.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};
