"""Test doubles and helpers shared by the tests (not part of graphmem)."""
