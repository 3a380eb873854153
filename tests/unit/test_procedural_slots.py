"""Unit tests of graphmem.procedural.slots and of clustering by procedure: typed slots, masked
requests, renaming every identifier of a run leaves its cluster unchanged, runs of known kinds
cluster by kind whoever they served."""

from __future__ import annotations

import hashlib
import json
import math
import random
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem.procedural.cases import actions_of, draft
from graphmem.procedural.clustering import (
    Point,
    adjusted_rand_index,
    cluster,
    procedure_tokens,
)
from graphmem.procedural.formation import request_text
from graphmem.procedural.slots import identifiers, mask, slot_type, slots
from graphmem.procedural.steps import to_steps

T0 = datetime(2024, 5, 15, 12, tzinfo=UTC)


def test_slot_types_come_from_keys_then_from_values() -> None:
    assert slot_type("user_id", "mia_li_3668") == "user id"
    assert slot_type("reservation_id", "ABC123") == "reservation id"
    assert slot_type("flight_number", "HAT041") == "flight number"
    assert slot_type("payment_id", "credit_card_1") == "payment method"
    assert slot_type("date", "2024-05-20") == slot_type("dob", "1990-01-01") == "date"
    assert slot_type("amount", 120) == "amount" and slot_type("origin", "JFK") == "place"
    assert slot_type("first_name", "Mia") == "name" and slot_type("cabin", "economy") == "cabin"
    assert slot_type("reason", "change of plan") == "text"
    assert slot_type("value", "2024-01-01") == "date" and slot_type("x", True) == "yes/no"
    assert slots('{"reservation_id": "ABC", "flights": [{"flight_number": "HAT1", "date": '
                 '"2024-05-01"}], "payment_id": "gift_card_1"}') == {
        "flights[].date": "date", "flights[].flight_number": "flight number",
        "payment_id": "payment method", "reservation_id": "reservation id"}
    assert slots("not json") == {} and slots(None) == {}


def test_masking_hides_identifiers_not_the_request() -> None:
    text = ("Hi, I'm mia_li_3668, cancel HAT041 on May 20th at 3pm for $120.50, email "
            "a.b@x.com, reservation ABC123 for Sophia")
    assert mask(text, {"sophia": "name"}) == (
        "Hi, I'm <id>, cancel <id> on <date> at <time> for <amount>, email <email>, "
        "reservation <id> for <name>")
    assert mask("Please cancel my order") == "Please cancel my order"


# --- runs as an airline agent's client would send them ----------------------------------------
def call(name: str, args: dict[str, Any], cid: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def result(cid: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": json.dumps(content)}


def airline_run(kind: str, user: str, name: str, booking: str, flight: str, day: str,
                variant: int = 0) -> list[dict[str, Any]]:
    """One run of ``kind`` (cancel, change, bag) for one customer; ``variant`` adds noise that
    runs of one kind show (an extra look-up, the user read first or not)."""
    asks = {"cancel": f"Hi, I'm {user}. Please cancel my reservation {booking}.",
            "change": f"Hello, {user} here: move my flight {flight} to {day}, booking {booking}",
            "bag": f"I am {name} ({user}) and I want to add a checked bag to {booking}"}
    m: list[dict[str, Any]] = [{"role": "system", "content": "You are an airline agent."},
                               {"role": "user", "content": asks[kind]}]
    n = 0

    def tool(tool_name: str, args: dict[str, Any], out: Any) -> None:
        nonlocal n
        n += 1
        m.extend([call(tool_name, args, f"c{n}"), result(f"c{n}", out)])

    if variant % 2 == 0:
        tool("get_user_details", {"user_id": user},
             {"name": {"first_name": name}, "reservations": [booking]})
    tool("get_reservation_details", {"reservation_id": booking},
         {"reservation_id": booking, "flights": [{"flight_number": flight, "date": day}]})
    if kind == "cancel":
        tool("cancel_reservation", {"reservation_id": booking}, {"status": "cancelled"})
    elif kind == "change":
        tool("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": day}, [])
        if variant % 3 == 2:
            tool("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": day}, [])
        tool("update_reservation_flights", {"reservation_id": booking, "cabin": "economy",
             "flights": [{"flight_number": flight, "date": day}], "payment_id": f"card_{user}"},
             {"ok": True})
    else:
        tool("update_reservation_baggages", {"reservation_id": booking, "total_baggages": 2,
             "nonfree_baggages": 1, "payment_id": f"card_{user}"}, {"ok": True})
    m.append({"role": "assistant", "content": "Done."})
    return m


def fake_vector(text: str) -> list[float]:
    """A deterministic stand-in for an embedding: equal texts, equal vectors."""
    digest = hashlib.sha256(text.encode()).digest()
    v = [b - 127.5 for b in digest[:16]]
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def point(id_: str, messages: list[dict[str, Any]]) -> Point:
    steps = to_steps(messages)
    d = draft(id_, None, steps, "success", T0)
    return Point(id_, fake_vector(request_text(d.intent, identifiers(steps))),
                 actions_of(steps))


CUSTOMERS = [("mia_li_3668", "Mia", "ABC123", "HAT041", "2024-05-20"),
             ("omar_rossi_1241", "Omar", "XY9ZZ1", "HAT136", "2024-05-22"),
             ("yara_garcia_1905", "Yara", "HXDUBJ", "HAT271", "2024-05-27")]


def runs_of_known_kinds() -> list[tuple[str, str, str, list[dict[str, Any]]]]:
    """Every customer does every kind, three runs each, each trial its own variant of the
    procedure: (id, kind, customer, messages)."""
    out = []
    for kind in ("cancel", "change", "bag"):
        for c, (user, name, booking, flight, day) in enumerate(CUSTOMERS):
            for trial in range(3):
                out.append((f"{kind}-{c}-{trial}", kind, user,
                            airline_run(kind, user, name, booking, flight, day, trial)))
    return out


def test_runs_of_known_kinds_cluster_by_kind_not_by_customer() -> None:
    runs = runs_of_known_kinds()
    kind_of = {i: k for i, k, _, _ in runs}
    customer_of = {i: c for i, _, c, _ in runs}
    for weight in (0.0, 0.25, 0.5):
        groups = cluster([point(i, m) for i, _, _, m in runs], request_weight=weight)
        assert all(len({kind_of[i] for i in g}) == 1 for g in groups)  # never two kinds
        assert all(len({customer_of[i] for i in g}) == len(CUSTOMERS) for g in groups)
        label = {i: n for n, g in enumerate(groups) for i in g}
        found = [str(label[i]) for i, _, _, _ in runs]
        assert adjusted_rand_index([k for _, k, _, _ in runs], found) > 0.5
        assert adjusted_rand_index([c for _, _, c, _ in runs], found) < 0.0


def test_a_procedure_is_its_tools_checks_and_slots() -> None:
    user, name, booking, flight, day = CUSTOMERS[0]
    tokens = procedure_tokens(point("x", airline_run("cancel", user, name, booking, flight,
                                                     day)).actions)
    assert "write:cancel_reservation" in tokens
    assert "before:cancel_reservation<get_reservation_details" in tokens
    assert "slot:cancel_reservation.reservation_id:reservation id" in tokens
    assert "check:cancel_reservation?get_reservation_details:reservation id" in tokens
    assert not any(booking.lower() in t.lower() or user in t for t in tokens)
    assert procedure_tokens([]) == ["no-call"]


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@st.composite
def renaming(draw: st.DrawFn, values: list[str]) -> dict[str, str]:
    """A new value for each identifier, of the same shape (a letter for a letter, of the same
    case, a digit for a digit; other characters kept), all distinct and unlike the old ones."""
    out: dict[str, str] = {}
    for v in values:
        pick = random.Random(draw(st.integers(0, 2**32)))
        while True:
            new = "".join(
                pick.choice(_LETTERS.upper()) if ch.isupper() else
                pick.choice(_LETTERS) if ch.islower() else
                pick.choice("0123456789") if ch.isdigit() else ch for ch in v)
            if new.lower() not in {x.lower() for x in [*values, *out.values()]}:
                out[v] = new
                break
    return out


def renamed(messages: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    """The run with every identifier replaced, wherever it appears (text, arguments, results)."""
    text = json.dumps(messages)
    for old in sorted(names, key=len, reverse=True):
        text = text.replace(old, names[old])
    out: list[dict[str, Any]] = json.loads(text)
    return out


def _identifiers(c: int) -> list[str]:
    user, name, booking, flight, _ = CUSTOMERS[c]
    return [user, f"card_{user}", name, booking, flight]


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_renaming_every_identifier_of_a_run_leaves_its_cluster_unchanged(data: st.DataObject,
                                                                          ) -> None:
    runs = runs_of_known_kinds()
    pick = data.draw(st.integers(0, len(runs) - 1))
    id_, _, user, messages = runs[pick]
    c = next(n for n, x in enumerate(CUSTOMERS) if x[0] == user)
    names = data.draw(renaming(_identifiers(c)))
    names[f"card_{user}"] = f"card_{names[user]}"
    before = point(id_, messages)
    after = point(id_, renamed(messages, names))
    assert procedure_tokens(after.actions) == procedure_tokens(before.actions)
    assert after.vector == before.vector  # the masked request is the same text
    points = [point(i, m) for i, _, _, m in runs]
    changed = [after if p.id == id_ else p for p in points]
    assert cluster(changed) == cluster(points)
    assert cluster(changed, request_weight=0.5) == cluster(points, request_weight=0.5)
