"""The server processes graphmem starts and stops for you: a local Neo4j (`neo4j_server`) and
the bookkeeping of the processes it started (`processes`, also used by the local LLM)."""
