"""Messages on their way in: ids, content hashes and retrieval units (`ingest`), time
expressions resolved (`temporal`), metadata as the store matches it (`metadata`)."""
