"""Adapters of the graphmem client to agent frameworks (each an optional extra)."""
