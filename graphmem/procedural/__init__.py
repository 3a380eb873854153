"""Procedural memory: an agent's own runs (traces) become cases, clusters of similar cases, and
skills (methods with the evidence for and against them). See `graphmem.procedural.service`."""
