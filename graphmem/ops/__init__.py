"""Running graphmem: the local Neo4j server and the other processes it starts, the HTTP
server under the API, the job worker, and re-embedding a database."""
