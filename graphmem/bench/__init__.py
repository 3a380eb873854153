"""Benchmarks: scripts that print numbers (not timed tests)."""
