"""Entities: the people, places, dates and topics messages mention, extracted without an LLM
(`graphmem.entities.extract`), stored as ``(:Entity)<-[:MENTIONS]-(:Message)`` and walked by
the ``graph`` search method (`graphmem.retrieval.graph`)."""
