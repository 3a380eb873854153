"""Replies written by pydantic-core (`api.replies`): the same JSON as FastAPI's own path."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from fastapi.encoders import jsonable_encoder

from graphmem.api.replies import model_reply
from graphmem.models import Hit, SearchResult, UnitRef


def test_a_model_reply_is_the_json_fastapi_would_send() -> None:
    hit = Hit(id="m1", text="We hiked — to the lake ☀", speaker="Ana",
              timestamp=datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC), session_id="s1",
              owner="o", score=1 / 61 + 1 / 75, rules=["vector", "fulltext"], nucleus=True)
    result = SearchResult(query="hiking?", method="rrf_expand", hits=[hit], observations=[],
                          interleaved=[UnitRef(unit="message", id="m1")], context="ctx",
                          context_tokens=3)
    reply = model_reply(result)
    assert reply.media_type == "application/json" and reply.status_code == 200
    assert json.loads(bytes(reply.body)) == jsonable_encoder(result)
    assert SearchResult.model_validate_json(bytes(reply.body)) == result
