// Purpose: re-embedding to a model of other dimensions. Drop the vector indexes; the schema step
//   that ends the migration creates them again with the new dimensions and waits until ONLINE.
// Parameters: none. Columns: none.
DROP INDEX sentence_vector IF EXISTS;
DROP INDEX fact_vector IF EXISTS;
DROP INDEX episode_vector IF EXISTS;
DROP INDEX window_vector IF EXISTS;
DROP INDEX case_vector IF EXISTS;
DROP INDEX skill_vector IF EXISTS;
DROP INDEX chunk_vector IF EXISTS;
DROP INDEX topic_vector IF EXISTS;
