"""Shared test settings. Integration tests (tests/integration) start a real Neo4j themselves."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
