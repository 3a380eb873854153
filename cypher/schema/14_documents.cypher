// Purpose: documents (see graphmem/documents/): each version a Document (the text as ground
//   truth), its Sections (nested headings) and Chunks (the retrieval units, NEXT in reading
//   order, each a span of the text); a DocumentLock per owner and key serialises versioning;
//   Topics (an owner's category tree). Ids are unique per tenant. chunk_fulltext is the chunks'
//   text index (scoped to an owner as in 09_fulltext_scope); chunk_vector and topic_vector are in
//   schema/vector/.
// Parameters: none. Columns: none. Idempotent.
CREATE CONSTRAINT document_key IF NOT EXISTS
FOR (d:Document) REQUIRE (d.tenant, d.id) IS UNIQUE;

CREATE CONSTRAINT section_key IF NOT EXISTS
FOR (s:Section) REQUIRE (s.tenant, s.id) IS UNIQUE;

CREATE CONSTRAINT chunk_key IF NOT EXISTS
FOR (c:Chunk) REQUIRE (c.tenant, c.id) IS UNIQUE;

CREATE CONSTRAINT document_lock_key IF NOT EXISTS
FOR (l:DocumentLock) REQUIRE (l.tenant, l.owner, l.key) IS UNIQUE;

CREATE CONSTRAINT topic_key IF NOT EXISTS
FOR (t:Topic) REQUIRE (t.tenant, t.id) IS UNIQUE;

CREATE INDEX document_owner IF NOT EXISTS
FOR (d:Document) ON (d.tenant, d.owner, d.key);

CREATE INDEX chunk_document IF NOT EXISTS
FOR (c:Chunk) ON (c.tenant, c.document_id);

CREATE INDEX chunk_owner_hash IF NOT EXISTS
FOR (c:Chunk) ON (c.tenant, c.owner, c.key, c.content_hash);

CREATE INDEX section_document IF NOT EXISTS
FOR (s:Section) ON (s.tenant, s.document_id);

CREATE INDEX topic_owner IF NOT EXISTS
FOR (t:Topic) ON (t.tenant, t.owner);

// (tenant, owner) alone, for forgetting an owner: the planner does not seek the composite
// indexes above by their first two properties (see 11_owner_indexes)
CREATE INDEX document_of_owner IF NOT EXISTS
FOR (d:Document) ON (d.tenant, d.owner);

CREATE INDEX section_of_owner IF NOT EXISTS
FOR (s:Section) ON (s.tenant, s.owner);

CREATE INDEX chunk_of_owner IF NOT EXISTS
FOR (c:Chunk) ON (c.tenant, c.owner);

CREATE INDEX document_lock_of_owner IF NOT EXISTS
FOR (l:DocumentLock) ON (l.tenant, l.owner);

CREATE FULLTEXT INDEX chunk_fulltext IF NOT EXISTS
FOR (c:Chunk) ON EACH [c.search_text, c.scope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};
