"""Packing the context for agents (pure): priority, dedupe, the token budget, rendering with
evidence ids; building it from search results; mapping a reader's citations back."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from graphmem.answer.reader import ReaderReply, citations, reply_schema, sources
from graphmem.documents.models import ChunkResult
from graphmem.documents.recall import chunk_search, search_result
from graphmem.errors import InvalidInput
from graphmem.models import (
    ChunkHit,
    ContextItem,
    ContextRequest,
    ContextResult,
    EpisodeHit,
    Expand,
    FactHit,
    Hit,
    SearchRequest,
    SearchResult,
    Turn,
)
from graphmem.procedural.models import Action, Case, Skill, SkillStep
from graphmem.retrieval.context import estimate_tokens
from graphmem.retrieval.packing import (
    LABEL_TOKENS,
    Piece,
    build,
    chunk_pieces,
    pack,
    pieces,
    prioritise,
    skill_piece,
)

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
AS_OF = datetime(2023, 6, 1, tzinfo=UTC)


def message(id_: str, n: int = 0, core: bool = True, score: float = 1.0, text: str = "hello",
            session: str = "s1") -> Piece:
    item = ContextItem(evidence="", unit="message", id=id_, text=text,
                       at=T0 + timedelta(seconds=30 * n), sources=[id_], core=core,
                       score=score, rules=["vector"], tokens=0, speaker="Caroline",
                       session_id=session)
    return Piece(item, n)


def fact(id_: str, content: str = "Caroline has a dog", core: bool = True) -> Piece:
    item = ContextItem(evidence="", unit="fact", id=id_, text=content, at=T0, sources=["m1"],
                       core=core, score=0.5, rules=["vector"], tokens=0, subject="Caroline",
                       type="pet", valid_from=T0, valid_to=None)
    return Piece(item)


def episode(id_: str, days: int = 0) -> Piece:
    item = ContextItem(evidence="", unit="episode", id=id_, text="They talked about dogs.",
                       at=T0 + timedelta(days=days), sources=["m1", "m2"], core=True,
                       score=0.4, rules=["vector"], tokens=0, title="Dogs")
    return Piece(item, days)


def test_core_first_then_neighbours_once_each() -> None:
    pieces = [message("n1", 1, core=False), message("h1", 2), message("h1", 2), fact("f1")]
    packed = pack(pieces, 1000, AS_OF)
    assert packed.duplicates == 1 and packed.candidates == 4
    assert [(i.unit, i.id) for i in packed.items] == [
        ("fact", "f1"), ("message", "n1"), ("message", "h1")]  # context order: facts, then time
    assert [i.evidence for i in packed.items] == ["e1", "e2", "e3"]
    assert [i.core for i in packed.items] == [True, False, True]


def test_budget_counts_every_token_of_the_context() -> None:
    pieces = [message(f"m{n}", n, text=f"turn {n} about the lake sunrise painting")
              for n in range(20)]
    for budget in (1, 20, 37, 80, 200, 10_000):
        packed = pack(pieces, budget, AS_OF)
        assert packed.tokens == estimate_tokens(packed.context) <= budget
        assert len(packed.items) + len(packed.over_budget) == 20
    assert pack(pieces, 1, AS_OF).items == []


def test_an_item_too_big_is_left_out_and_smaller_ones_still_enter() -> None:
    big = message("big", 0, text="word " * 300, score=2.0)
    small = message("small", 1, text="short", score=1.0)
    packed = pack([big, small], 60, AS_OF)
    assert [i.id for i in packed.items] == ["small"]
    assert [(r.unit, r.id) for r in packed.over_budget] == [("message", "big")]


def test_rendering_sections_and_evidence_lines() -> None:
    pieces = [message("a2", 2, session="s2"), message("a1", 1, text="I went there yesterday."),
              episode("ep", 0), fact("f1"), message("a3", 3, session="s2")]
    packed = pack(pieces, 10_000, AS_OF)
    lines = packed.context.split("\n")
    assert lines[0] == "## facts valid at 2023-06-01"
    assert lines[1].startswith("[e1] Caroline · pet: Caroline has a dog (valid from 2023-05-08")
    assert "## episodes" in lines and "[e2] Dogs (happened 2023-05-08): They talked" in \
        packed.context
    assert "[e3] 2023-05-08 13:56 Caroline: I went there yesterday [2023-05-07]." in \
        packed.context  # relative time resolved against the message's own time
    headers = [line for line in lines if line.startswith("## session")]
    assert headers == ["## session s1 · 2023-05-08 13:56 UTC",
                       "## session s2 · 2023-05-08 13:57 UTC"]
    assert [i.id for i in packed.items] == ["f1", "ep", "a1", "a2", "a3"]
    for item in packed.items:  # each item's tokens: its line, evidence id included
        line = next(x for x in lines if x.startswith(f"[{item.evidence}] "))
        assert item.tokens == estimate_tokens(line)
    assert LABEL_TOKENS == 3


def test_prompt_unsafe_text_is_cleaned_and_multiline_indented() -> None:
    packed = pack([message("m", 0, text="one\u202e\r\ntwo\x00")], 1000, AS_OF)
    assert "[e1] 2023-05-08 13:56 Caroline: one\n    two" in packed.context
    assert "\u202e" not in packed.context and "\x00" not in packed.context


def test_prioritise_hits_and_facts_in_turn_then_episodes_then_neighbours() -> None:
    msgs = [message("m-low", 0, score=0.1), message("m-high", 1, score=0.9),
            message("n", 2, core=False, score=0.5)]
    out = prioritise(msgs, [fact("f1"), fact("f2")], [episode("e1")])
    assert [p.item.id for p in out] == ["m-high", "f1", "m-low", "f2", "e1", "n"]


def test_under_a_small_budget_the_answering_fact_is_kept_before_an_episode() -> None:
    """A 60-token episode ranked first among episodes no longer pushes out the second fact
    (the one that answers)."""
    long = "They talked about dogs and cats and long walks in the park every morning. " * 4
    ep = Piece(episode("e1").item.model_copy(update={"text": long}))
    answer = fact("f2", "Caroline adopted a puppy named Oscar in May")
    hit = message("m1", 0, text="Hi!")
    budget = pack([hit, fact("f1"), ep], 1000, AS_OF).tokens  # room for the episode, not both
    assert estimate_tokens(long) >= 60
    packed = pack(prioritise([hit], [fact("f1"), answer], [ep]), budget, AS_OF)
    kept = [(i.unit, i.id) for i in packed.items]
    assert ("fact", "f2") in kept and ("episode", "e1") not in kept
    assert packed.over_budget[0].id == "e1" and packed.tokens <= budget


def test_window_turns_are_context_around_their_hit_not_hits() -> None:
    hit = Hit(id="m1", text="I adopted a puppy", speaker="Caroline", timestamp=T0,
              session_id="s1", owner="o", score=0.8, rules=["vector"], nucleus=True,
              window=[Turn(id="m0", text="Any news?", speaker="Mel",
                           timestamp=T0 - timedelta(minutes=1), session_id="s1"),
                      Turn(id="m2", text="Congrats!", speaker="Mel",
                           timestamp=T0 + timedelta(minutes=1), session_id="s1")])
    result = SearchResult(query="q", method="rrf_expand", hits=[hit], context="",
                          context_tokens=0)
    messages, _, _ = pieces(result)
    assert [(p.item.id, p.item.core, p.item.rules) for p in messages] == [
        ("m1", True, ["vector"]), ("m0", False, ["neighbour"]), ("m2", False, ["neighbour"])]
    packed = pack(prioritise(messages, [], []), 1000, AS_OF)
    assert [i.id for i in packed.items] == ["m0", "m1", "m2"]  # rendered in time


def _result(req: SearchRequest) -> SearchResult:
    hits, observations, episodes = [], [], []
    if req.units == "messages":
        hits = [Hit(id=f"m{n}", text=f"turn {n}", speaker="Caroline", timestamp=T0 +
                    timedelta(seconds=30 * n), session_id="s1", owner=req.owner, score=1 / (n + 1),
                    rules=["vector"], nucleus=n == 1) for n in range(3)]
    elif req.units == "observations":
        observations = [FactHit(id="f1", subject="Caroline", type="pet", content="a dog",
                                valid_from=T0, valid_to=None, score=0.3, rules=["vector"],
                                sources=["m1"])]
    else:
        episodes = [EpisodeHit(id="ep1", title="Dogs", narrative="About dogs.", reported_at=T0,
                               occurred_at=T0, occurred_until=T0, score=0.2, rules=["vector"],
                               messages=["m0", "m1", "m2"])]
        hits = [Hit(id="m0", text="turn 0", speaker="Caroline", timestamp=T0, session_id="s1",
                    owner=req.owner, score=0.2, rules=["episode"], nucleus=False)]
    return SearchResult(query=req.query, method=req.method, hits=hits, observations=observations,
                        episodes=episodes, context="", context_tokens=0)


def test_build_asks_one_search_per_unit_at_the_questions_time_all_at_once() -> None:
    seen: list[SearchRequest] = []

    def search(reqs: Sequence[SearchRequest]) -> list[SearchResult]:
        seen.extend(reqs)
        return [_result(r) for r in reqs]

    req = ContextRequest(query="Does Caroline have a pet?", owner="o", as_of=AS_OF, trace=True,
                         k=7)
    out = build(search, req, "rrf_windows", datetime(2030, 1, 1, tzinfo=UTC))
    assert [(r.units, r.method, r.as_of, r.k) for r in seen] == [
        ("messages", "rrf_windows", AS_OF, 7), ("observations", "rrf", AS_OF, 7),
        ("episodes", "rrf", AS_OF, 7)]
    assert [r.trace for r in seen] == [True, False, False]
    assert out.as_of == AS_OF and out.method == "rrf_windows"
    assert {(i.unit, i.id) for i in out.items} == {
        ("message", "m0"), ("message", "m1"), ("message", "m2"), ("fact", "f1"),
        ("episode", "ep1")}
    assert next(i for i in out.items if i.unit == "episode").sources == ["m0", "m1", "m2"]
    assert out.trace is not None and out.trace.kept == 5 and out.trace.duplicates == 0
    assert [s["unit"] for s in out.trace.searches] == ["message", "fact", "episode"]

    seen.clear()
    only = build(search, ContextRequest(query="q", owner="o", units=["fact"]), "vector",
                 AS_OF)
    assert [(r.units, r.method) for r in seen] == [("observations", "vector")]
    assert [i.unit for i in only.items] == ["fact"] and only.trace is None
    assert only.as_of == AS_OF  # `now` stands in for a missing as_of


def test_citations_map_back_and_invented_ones_are_dropped() -> None:
    pieces = [message("conv-26/D1:3", 0), fact("f1")]
    packed = pack(pieces, 1000, AS_OF)
    ctx = ContextResult(query="q", owner="o", as_of=AS_OF, method="rrf_expand",
                        context=packed.context, context_tokens=packed.tokens, max_tokens=1000,
                        items=packed.items)
    cited, invented = citations(["E2", "[e1]", "e2", "e9", "m3"], ctx)
    assert [(c.evidence, c.unit, c.id) for c in cited] == [
        ("e2", "message", "conv-26/D1:3"), ("e1", "fact", "f1")]
    assert invented == ["e9", "m3"]
    assert sources(cited) == ["conv-26/D1:3", "m1"]


def test_reply_schema_allows_only_the_contexts_ids() -> None:
    schema = reply_schema(3)
    assert schema["properties"]["citations"]["items"]["enum"] == ["e1", "e2", "e3"]
    assert set(schema["required"]) == {"answer", "citations", "insufficient"}
    assert reply_schema(0)["properties"]["citations"]["maxItems"] == 0
    assert ReaderReply.model_validate({"answer": "x"}).citations == []


def _skill(flagged: bool = False) -> Skill:
    case = Case(id="case-1", trace_id="t1", owner="o", intent="cancel my order",
                request="cancel my order", writes=["cancel_order"],
                actions=[Action(tool="cancel_order", keys=["order_id"], writes=True)],
                outcome="success", occurred_at=T0, quality=1.0, quality_reason="complete",
                filtered=False)
    return Skill(id="sk-1-v2", lineage="sk-1", version=2, owner="o", name="cancel_order",
                 description="d", when_to_use='Requests like "cancel my order"',
                 steps=[SkillStep(tool="get_order", keys=["order_id"], writes=False, support=2),
                        SkillStep(tool="cancel_order", keys=["order_id"], writes=True,
                                  support=2)],
                 pitfalls=["1 of 1 failed runs called refund_order"], successes=2, failures=1,
                 flagged=flagged, flag_reason="2 of the last 3 executions failed" if flagged
                 else None, valid_from=T0, recorded_at=T0, score=0.03, cases=[case])


def test_a_skill_comes_first_and_rests_on_its_cases() -> None:
    piece = skill_piece(_skill())
    assert piece.item.unit == "skill" and piece.item.sources == ["case-1"]
    assert piece.item.title == "cancel_order" and piece.item.core
    assert "get_order(order_id) -> cancel_order(order_id)*" in piece.item.text
    assert "refund_order" in piece.item.text and "flagged" not in piece.item.text
    assert "flagged: 2 of the last 3" in skill_piece(_skill(flagged=True)).item.text
    out = prioritise([message("m1")], [fact("f1")], [], [piece])
    assert [p.item.unit for p in out] == ["skill", "message", "fact"]
    packed = pack(out, 1000, AS_OF)
    assert packed.context.startswith("## skill learned from earlier runs\n[e1] cancel_order\n")
    assert packed.tokens == estimate_tokens(packed.context)
    small = pack(out, packed.items[0].tokens + 5, AS_OF)  # the skill's header does not fit
    assert [i.unit for i in small.items] == ["fact", "message"]
    assert [(r.unit, r.id) for r in small.over_budget] == [("skill", "sk-1-v2")]


def test_build_adds_the_best_skill_only_when_asked() -> None:
    calls: list[int] = []

    def best() -> list[Skill]:
        calls.append(1)
        return [_skill()]

    def search(reqs: Sequence[SearchRequest]) -> list[SearchResult]:
        return [_result(r) for r in reqs]

    plain = build(search, ContextRequest(query="q", owner="o"), "rrf_expand", AS_OF, best)
    assert calls == [] and all(i.unit != "skill" for i in plain.items)
    req = ContextRequest(query="q", owner="o", units=["skill", "message"], trace=True)
    out = build(search, req, "rrf_expand", AS_OF, best)
    assert out.items[0].unit == "skill" and out.items[0].evidence == "e1"
    assert out.trace is not None and out.trace.searches[-1] == {
        "unit": "skill", "method": "rrf", "found": 1}
    none = build(search, ContextRequest(query="q", owner="o", units=["skill"]), "rrf_expand",
                 AS_OF, list)
    assert none.items == [] and none.context == ""


def _chunk(id_: str, doc: str = "d-1-v2", ordinal: int = 0, score: float = 0.5,
           text: str = "Laptops are set up on the first day.", core: bool = True) -> ChunkHit:
    return ChunkHit(id=id_, document_id=doc, key=doc.split("-v")[0] + ".md",
                    version=int(doc.rsplit("-v", 1)[1]), title="Handbook",
                    section=["Onboarding", "Laptops"], start=10 * ordinal,
                    end=10 * ordinal + len(text), text=text, score=score,
                    rules=["vector", "fulltext"] if core else [], core=core, ordinal=ordinal,
                    valid_from=T0)


def test_chunks_take_turns_with_hits_and_facts_and_cite_their_document() -> None:
    chunks = chunk_pieces([_chunk("d-1-v2:c3", ordinal=3), _chunk("d-9-v1:c0", "d-9-v1"),
                           _chunk("d-1-v2:c1", ordinal=1, score=0.2)])
    order = prioritise([message("h1", 1), message("h2", 2, score=0.5)], [fact("f1")], [],
                       chunks=chunks)
    assert [p.item.id for p in order] == ["h1", "f1", "d-1-v2:c3", "h2", "d-9-v1:c0",
                                          "d-1-v2:c1"]
    packed = pack(order, 1000, AS_OF)
    first = next(i for i in packed.items if i.id == "d-1-v2:c3")
    assert (first.unit, first.sources, first.document_id, first.key, first.version) == (
        "chunk", ["d-1-v2"], "d-1-v2", "d-1.md", 2)
    assert (first.section, first.start, first.end, first.at) == (
        ["Onboarding", "Laptops"], 30, 30 + len(first.text), T0)
    assert first.rules == ["vector", "fulltext"] and first.title == "Handbook"
    # facts, then each document's chunks in reading order (the best document first), then
    # the messages in time
    assert [(i.unit, i.id) for i in packed.items] == [
        ("fact", "f1"), ("chunk", "d-1-v2:c1"), ("chunk", "d-1-v2:c3"),
        ("chunk", "d-9-v1:c0"), ("message", "h1"), ("message", "h2")]
    assert '## document "Handbook" (d-1.md, version 2, valid from 2023-05-08)\n' \
        "[e2] Onboarding > Laptops: Laptops are set up" in packed.context
    assert packed.context.count("## document") == 2
    assert packed.tokens == estimate_tokens(packed.context)


def test_chunks_stay_within_the_budget() -> None:
    long = "The laptop policy explains every step of the setup in detail. " * 20
    chunks = chunk_pieces([_chunk(f"d-1-v2:c{n}", ordinal=n, text=long) for n in range(5)])
    order = prioritise([message("h1", 1)], [fact("f1")], [], chunks=chunks)
    for budget in (30, 200, 400, 900, 5000):
        packed = pack(order, budget, AS_OF)
        assert packed.tokens == estimate_tokens(packed.context) <= budget
        assert len(packed.items) + len(packed.over_budget) == 7
    mid = pack(order, 400, AS_OF)  # one chunk fits beside the message and the fact
    assert [i.unit for i in mid.items] == ["fact", "chunk", "message"]
    assert ("chunk", "d-1-v2:c1") in {(r.unit, r.id) for r in mid.over_budget}


def test_build_adds_chunks_only_when_asked_and_no_section_without_them() -> None:
    calls: list[int] = []

    def best() -> list[ChunkHit]:
        calls.append(1)
        return [_chunk("d-1-v2:c0")]

    def search(reqs: Sequence[SearchRequest]) -> list[SearchResult]:
        return [_result(r) for r in reqs]

    plain = build(search, ContextRequest(query="q", owner="o"), "rrf_expand", AS_OF,
                  best_chunks=best)
    assert calls == [] and all(i.unit != "chunk" for i in plain.items)
    req = ContextRequest(query="q", owner="o", units=["message", "chunk"], trace=True)
    out = build(search, req, "rrf_expand", AS_OF, best_chunks=best)
    assert [i.unit for i in out.items].count("chunk") == 1
    assert out.trace is not None and out.trace.searches[-1] == {
        "unit": "chunk", "method": "rrf", "found": 1}
    empty = build(search, req.model_copy(update={"trace": False}), "rrf_expand", AS_OF,
                  best_chunks=list)
    without = build(search, ContextRequest(query="q", owner="o", units=["message"]),
                    "rrf_expand", AS_OF)
    assert empty.context == without.context and "## document" not in empty.context
    assert empty.items == without.items


def test_a_search_request_for_chunks_is_the_chunk_search() -> None:
    req = SearchRequest(query="laptops", owner="o", units="chunks", k=3,
                        documents=["handbook.md"], metadata={"team": "it"}, as_of=AS_OF,
                        expand=Expand(before=1, after=2), method="vector")
    got = chunk_search(req)
    assert (got.query, got.owner, got.k, got.documents, got.metadata, got.as_of,
            got.method, got.neighbours) == ("laptops", "o", 3, ["handbook.md"],
                                            {"team": "it"}, AS_OF, "vector", 2)
    assert chunk_search(SearchRequest(query="q", owner="o", units="chunks")).method == "rrf"
    for bad, field in (({"session_id": "s"}, "session_id"), ({"max_messages": 3},
                       "max_messages"), ({"order": "time"}, "order"), ({"k": 101}, "k"),
                       ({"expand": Expand(before=4, after=0)}, "expand")):
        with pytest.raises(InvalidInput) as info:
            chunk_search(SearchRequest(query="q", owner="o", units="chunks", **bad))
        assert info.value.field == field
    with pytest.raises(ValidationError, match="documents only"):
        SearchRequest(query="q", owner="o", documents=["a"])
    with pytest.raises(ValidationError, match="documents only"):
        SearchRequest(query="q", owner="o", units="episodes", topic="tp-1")
    with pytest.raises(ValidationError, match="add \"chunk\""):
        ContextRequest(query="q", owner="o", units=["message"], topic="tp-1")
    with pytest.raises(ValidationError, match="matched exactly"):
        SearchRequest(query="q", owner="o", units="chunks", metadata={"team": ["it", "hr"]})
    with pytest.raises(ValidationError, match="add \"chunk\""):
        ContextRequest(query="q", owner="o", documents=["a"])
    result = search_result(req, ChunkResult(query="laptops", chunks=[
        _chunk("d-1-v2:c0"), _chunk("d-1-v2:c1", ordinal=1, core=False)]))
    assert result.hits == [] and [c.id for c in result.chunks] == ["d-1-v2:c0", "d-1-v2:c1"]
    assert result.method == "vector" and result.context_tokens == estimate_tokens(result.context)
    assert result.context.startswith('## document "Handbook" (d-1.md, version 2, valid from '
                                     "2023-05-08)\nOnboarding > Laptops: Laptops")
