"""Shared test settings. Integration tests (tests/integration) start a real Neo4j themselves."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.scripted_openai import ScriptedOpenAIServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# No test may reach a real LLM because a developer's shell has one configured.
for _name in list(os.environ):
    if _name.upper().startswith(("GRAPHMEM_LLM_", "OPENAI_")):
        del os.environ[_name]


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAIServer]:
    """The scripted OpenAI-compatible test server (a test double), started for one test."""
    with ScriptedOpenAIServer() as server:
        yield server
