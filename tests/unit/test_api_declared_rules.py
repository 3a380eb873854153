"""The OpenAPI document declares the rules the server enforces, and the server takes no value the
document does not allow: a date-time needs an offset within +-18:00, forgetting needs a filter,
audit parameters are typed and non-empty, and a body's booleans, integers and strings are not
coerced from other JSON types."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from graphmem import audit
from graphmem.api.app import create_app
from graphmem.config import Settings
from graphmem.errors import InvalidInput
from graphmem.facts.models import ObservationIn
from graphmem.models import DATETIME_PATTERN, ForgetMessages, SearchRequest, utc_datetime
from graphmem.procedural.models import SkillSearch

PATTERN = re.compile(DATETIME_PATTERN)


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return create_app(Settings()).openapi()


@pytest.mark.parametrize("text", [
    "2023-05-08T13:56:00+18:01", "2023-05-08T13:56:00-19:00", "2023-05-08T13:56:00+24:00",
    "2023-05-08T13:56:00", "0000-01-01T00:00:00Z", "9000-01-01T00:00:00Z", "2023-05-08",
])
def test_the_pattern_and_the_server_refuse_the_same_times(text: str) -> None:
    assert PATTERN.fullmatch(text) is None
    with pytest.raises(ValueError):
        utc_datetime(text)


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(8999, 12, 30)),
       st.integers(min_value=-18 * 60, max_value=18 * 60),
       st.sampled_from(["T", "t", " "]), st.sampled_from(["", ":"]))
def test_every_time_the_pattern_allows_is_read(moment: datetime, minutes: int, sep: str,
                                                colon: str) -> None:
    sign = "-" if minutes < 0 else "+"
    offset = f"{sign}{abs(minutes) // 60:02d}{colon}{abs(minutes) % 60:02d}"
    text = moment.date().isoformat() + sep + moment.strftime("%H:%M:%S") + offset
    if not datetime(1, 1, 1) < moment - timedelta(minutes=minutes) < datetime(9000, 1, 1):
        return  # out of range once in UTC: refused by the server, said in the description
    assert PATTERN.fullmatch(text)
    assert utc_datetime(text).tzinfo == UTC


def test_datetime_fields_and_parameters_declare_the_pattern(doc: dict[str, Any]) -> None:
    search = doc["components"]["schemas"]["SearchRequest"]["properties"]["time_from"]
    assert {"type": "string", "format": "date-time", "pattern": DATETIME_PATTERN} in \
        search["anyOf"]
    profile = next(p for p in doc["paths"]["/v1/profile/{owner}"]["get"]["parameters"]
                   if p["name"] == "as_of")
    assert profile["schema"]["anyOf"][0]["pattern"] == DATETIME_PATTERN


def test_forgetting_needs_a_filter_in_the_schema_too(doc: dict[str, Any]) -> None:
    schema = doc["components"]["schemas"]["ForgetMessages"]
    assert [a["required"] for a in schema["anyOf"]] == [
        ["metadata"], ["session_id"], ["time_from"], ["time_to"]]
    with pytest.raises(ValidationError):
        ForgetMessages.model_validate({"owner": "alice", "session_id": None})


def test_audit_parameters_are_typed_and_non_empty(doc: dict[str, Any]) -> None:
    params = {p["name"]: p["schema"]
              for p in doc["paths"]["/v1/audit/{name}"]["get"]["parameters"]
              if p["in"] == "query"}
    assert params["owner"]["minLength"] == 1
    assert params["from"]["pattern"] == DATETIME_PATTERN
    assert set(params) == set(audit.declared())
    for kind, raw in [("string", ""), ("datetime", ""), ("datetime", "2023-05-08T13:56"),
                      ("int", "1.5"), ("bool", "yes")]:
        with pytest.raises(InvalidInput):
            audit.coerce("x", kind, raw)


@pytest.mark.parametrize(("model", "body", "field"), [
    (ObservationIn, {"owner": "a", "subject": "s", "type": "t", "content": "c", "explicit": 0},
     "explicit"),
    (SkillSearch, {"query": "q", "owner": "a", "cases_per_skill": False}, "cases_per_skill"),
    (SearchRequest, {"query": "q", "owner": "a", "k": "5"}, "k"),
    (SearchRequest, {"query": 5, "owner": "a"}, "query"),
])
def test_bodies_take_no_value_of_another_json_type(model: Any, body: dict[str, Any],
                                                   field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        model.model_validate(body)
    assert [e["loc"] for e in refused.value.errors()] == [(field,)]
