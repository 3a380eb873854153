"""Packing the context an agent puts in its prompt (`POST /v1/context`): search results turned
into units (messages, episodes, facts, and on request the top skills and document chunks) with
their sources, put in priority order, deduplicated and cut to a token budget, then rendered
with a short evidence id (``e1`` .. ``eN``) on every line. Pure: no database, no model.

Priority: the skills first when asked for (methods for the task at hand, best first), then the
message hits, facts and chunks, taking turns (a message hit, a fact, a chunk, the next message
hit, ...: scores of different units are never compared), then the episodes (a fact states in a
line what an episode tells in a paragraph: under a small budget the fact is kept), then the
turns around message hits, those of the best hit first. A unit offered twice (same unit and
id) is kept once. Units are then taken in that order while the rendered context stays within
the budget; a unit that does not fit is left out (and named) and smaller ones after it may
still enter. The budget counts every token of the rendered context, headers and evidence ids
included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import zip_longest

from graphmem.documents.recall import chunk_line, chunk_method, document_header
from graphmem.messages import temporal
from graphmem.models import (
    ChunkHit,
    ContextItem,
    ContextRequest,
    ContextResult,
    ContextTrace,
    ItemRef,
    Method,
    SearchRequest,
    SearchResult,
    Units,
)
from graphmem.procedural.models import Skill
from graphmem.procedural.recommend import render
from graphmem.retrieval.context import estimate_tokens, prompt_safe

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""A chunk's time when its version's is unknown."""
LABEL_TOKENS = estimate_tokens("[e1] ")
"""What the evidence id before a line costs: ``[``, ``e12``, ``]`` are three tokens whatever
the number."""


@dataclass(frozen=True)
class Piece:
    """A unit offered to packing: the item (``evidence`` and ``tokens`` are set by `pack`) and
    its chronological position among the units of its kind (ties in time keep the search's
    order)."""

    item: ContextItem
    order: int = 0

    @property
    def key(self) -> tuple[str, str]:
        return (self.item.unit, self.item.id)


@dataclass(frozen=True)
class Packed:
    items: list[ContextItem]
    """In the order of ``context``, numbered e1 .. eN."""
    context: str
    tokens: int
    over_budget: list[ItemRef]
    duplicates: int
    candidates: int


def _item(**fields: object) -> ContextItem:
    return ContextItem.model_validate({"evidence": "", "tokens": 0, **fields})


def pieces(result: SearchResult) -> tuple[list[Piece], list[Piece], list[Piece]]:
    """The units of one search result: (messages, facts, episodes). A message rests on itself,
    an episode on its messages, a fact on its sources. The turns in a hit's window are
    messages too, not core, scored as their hit."""
    messages = [Piece(_item(unit="message", id=h.id, text=h.text, at=h.timestamp,
                            sources=[h.id], core=h.nucleus, score=h.score, rules=h.rules,
                            speaker=h.speaker, session_id=h.session_id,
                            metadata=h.metadata), n)
                for n, h in enumerate(result.hits)]
    messages += [Piece(_item(unit="message", id=t.id, text=t.text, at=t.timestamp,
                             sources=[t.id], core=False, score=h.score, rules=["neighbour"],
                             speaker=t.speaker, session_id=t.session_id,
                             metadata=t.metadata), len(messages) + n)
                 for n, (h, t) in enumerate((h, t) for h in result.hits for t in h.window)]
    facts = [Piece(_item(unit="fact", id=f.id, text=f.content, at=f.valid_from,
                         sources=f.sources, core=True, score=f.score, rules=f.rules,
                         subject=f.subject, type=f.type, valid_from=f.valid_from,
                         valid_to=f.valid_to), n)
             for n, f in enumerate(result.observations)]
    episodes = [Piece(_item(unit="episode", id=e.id, text=e.narrative, at=e.occurred_at,
                            sources=e.messages, core=True, score=e.score, rules=e.rules,
                            title=e.title), n)
                for n, e in enumerate(result.episodes)]
    return messages, facts, episodes


def skill_piece(skill: Skill) -> Piece:
    """A skill as a unit, compactly (`graphmem.procedural.skills.render`): its name, ordered
    steps with their typed slots (``*`` for a step that changes state), the checks before each
    write, support, what failed runs of its kind did differently, when to use it, and why it
    came up; it rests on its supporting cases."""
    return Piece(_item(unit="skill", id=skill.id, text=skill.text or render(skill),
                       at=skill.valid_from,
                       sources=[c.id for c in skill.cases], core=True, score=skill.score or 0.0,
                       rules=[], title=skill.name))


def chunk_pieces(chunks: Sequence[ChunkHit]) -> list[Piece]:
    """Document chunks as units (best first, as found), each resting on its document version
    and citing it (key, version, section path, offsets); ``order`` is the reading order: the
    documents by their best chunk, then each document's chunks by position."""
    rank: dict[str, int] = {}
    for c in chunks:
        rank.setdefault(c.document_id, len(rank))
    return [Piece(_item(unit="chunk", id=c.id, text=c.text, at=c.valid_from or EPOCH,
                        sources=[c.document_id], core=c.core, score=c.score,
                        rules=[r for r in c.rules if r in ("vector", "fulltext")]
                        if c.core else ["neighbour"], title=c.title,
                        document_id=c.document_id, key=c.key, version=c.version,
                        section=list(c.section), start=c.start, end=c.end,
                        valid_from=c.valid_from),
                  (rank[c.document_id] << 32) + c.ordinal)
            for c in chunks]


def prioritise(messages: Sequence[Piece], facts: Sequence[Piece],
               episodes: Sequence[Piece], skills: Sequence[Piece] = (),
               chunks: Sequence[Piece] = ()) -> list[Piece]:
    """The skills first, then message hits, facts and chunks in turn (hits best first, facts
    and chunks in their rank order), then the episodes in their rank order, then the other
    messages, best first (ties: in the order given), then the other chunks."""
    hits = sorted((m for m in messages if m.item.core), key=lambda m: -m.item.score)
    rest = sorted((m for m in messages if not m.item.core), key=lambda m: -m.item.score)
    found = [c for c in chunks if c.item.core]
    turns = [p for group in zip_longest(hits, facts, found) for p in group if p is not None]
    return [*skills, *turns, *episodes, *rest, *(c for c in chunks if not c.item.core)]


def _line(item: ContextItem) -> str:
    """An item's line(s) without the evidence id; the text `prompt_safe`, relative times in a
    message resolved against its own time ("yesterday [2023-05-07]")."""
    if item.unit == "message":
        text = temporal.annotate(item.text, item.at)
        body = f"{item.at:%Y-%m-%d %H:%M} {item.speaker}: {text}"
    elif item.unit == "episode":
        body = f"{item.title} (happened {item.at:%Y-%m-%d}): {item.text}"
    elif item.unit == "skill":
        body = f"{item.title}\n{item.text}"
    elif item.unit == "chunk":
        return chunk_line(item.section or [], item.text)
    else:
        until = f" until {item.valid_to:%Y-%m-%d}" if item.valid_to else ""
        since = item.valid_from or item.at
        body = f"{item.subject} · {item.type}: {item.text} (valid from {since:%Y-%m-%d}{until})"
    return prompt_safe(body).strip().replace("\n", "\n    ")


def _sections(chosen: Sequence[Piece], as_of: datetime) -> list[tuple[str, list[Piece]]]:
    """The skill, facts (best first), episodes (in time), document chunks (one section per
    document version, in reading order), then messages in time, one section per run of
    consecutive messages of one session."""
    skills = [p for p in chosen if p.item.unit == "skill"]
    facts = [p for p in chosen if p.item.unit == "fact"]
    episodes = sorted((p for p in chosen if p.item.unit == "episode"),
                      key=lambda p: (p.item.at, p.order))
    chunks = sorted((p for p in chosen if p.item.unit == "chunk"), key=lambda p: p.order)
    messages = sorted((p for p in chosen if p.item.unit == "message"),
                      key=lambda p: (p.item.at, p.order))
    out: list[tuple[str, list[Piece]]] = []
    if skills:
        out.append(("## skill learned from earlier runs", skills))
    if facts:
        out.append((f"## facts valid at {as_of:%Y-%m-%d}", facts))
    if episodes:
        out.append(("## episodes", episodes))
    for c in chunks:
        if out and out[-1][1][-1].item.document_id == c.item.document_id \
                and out[-1][1][-1].item.unit == "chunk":
            out[-1][1].append(c)
        else:
            out.append((document_header(c.item.key or "", c.item.version or 0, c.item.title,
                                        c.item.valid_from), [c]))
    for m in messages:
        if out and out[-1][1][-1].item.session_id == m.item.session_id \
                and out[-1][1][-1].item.unit == "message":
            out[-1][1].append(m)
        else:
            header = prompt_safe(f"## session {m.item.session_id} · {m.item.at:%Y-%m-%d %H:%M} UTC")
            out.append((header, [m]))
    return out


def _header_tokens(chosen: Sequence[Piece], as_of: datetime) -> int:
    return sum(estimate_tokens(header) for header, _ in _sections(chosen, as_of))


def pack(candidates: Sequence[Piece], max_tokens: int, as_of: datetime) -> Packed:
    """Core units first (otherwise in the given order), one per (unit, id), taken while the
    rendered context stays within ``max_tokens``; rendered with evidence ids e1 .. eN in the
    order of the context. ``context`` has exactly ``tokens`` tokens (`estimate_tokens`)."""
    ordered = [p for p in candidates if p.item.core] + [p for p in candidates if not p.item.core]
    unique: dict[tuple[str, str], Piece] = {}
    for p in ordered:
        unique.setdefault(p.key, p)
    lines = {key: _line(p.item) for key, p in unique.items()}
    cost = {key: estimate_tokens(line) + LABEL_TOKENS for key, line in lines.items()}
    chosen: list[Piece] = []
    over: list[ItemRef] = []
    body = 0
    for key, p in unique.items():
        if body + cost[key] + _header_tokens([*chosen, p], as_of) <= max_tokens:
            chosen.append(p)
            body += cost[key]
        else:
            over.append(ItemRef(unit=p.item.unit, id=p.item.id))
    items: list[ContextItem] = []
    blocks: list[str] = []
    for header, members in _sections(chosen, as_of):
        rows = [header]
        for p in members:
            evidence = f"e{len(items) + 1}"
            items.append(p.item.model_copy(update={"evidence": evidence, "tokens": cost[p.key]}))
            rows.append(f"[{evidence}] {lines[p.key]}")
        blocks.append("\n".join(rows))
    context = "\n\n".join(blocks)
    return Packed(items=items, context=context, tokens=estimate_tokens(context),
                  over_budget=over, duplicates=len(ordered) - len(unique),
                  candidates=len(candidates))


Searches = Callable[[Sequence[SearchRequest]], list[SearchResult]]
"""Runs searches and returns their results in order (the service runs them side by side)."""
UNIT_SEARCHES: tuple[tuple[str, Units], ...] = (
    ("message", "messages"), ("fact", "observations"), ("episode", "episodes"))


BestSkill = Callable[[], Sequence[Skill]]
"""The top skills for the request, valid at its ``as_of``, best first (the service's skill
search, started beside the unit searches)."""
BestChunks = Callable[[], Sequence[ChunkHit]]
"""The best chunks of the owner's documents for the request, of the versions valid at its
``as_of``, best first (the service's chunk search, started beside the unit searches)."""


def build(searches: Searches, req: ContextRequest, method: Method,
          now: datetime, best_skill: BestSkill | None = None,
          best_chunks: BestChunks | None = None) -> ContextResult:
    """The packed context of ``req``: one search per unit asked for (messages with ``method``;
    facts valid at ``as_of`` and episodes with ``rrf``, or the single index ``method`` names),
    each of ``req.k`` hits, all handed to ``searches`` at once, and with unit ``skill`` the
    top skills (``best_skill``) valid at ``as_of``, with unit ``chunk`` the best chunks
    (``best_chunks``) of the document versions valid then; then `prioritise` and `pack`.
    ``now`` stands in for a missing ``as_of``."""
    as_of = req.as_of or now
    found: dict[str, list[Piece]] = {"message": [], "fact": [], "episode": []}
    report: list[dict[str, object]] = []
    rounds: list[dict[str, object]] = []
    asked = [(unit, units) for unit, units in UNIT_SEARCHES if unit in req.units]
    hows: list[Method] = [method if unit == "message" or method in ("fulltext", "vector")
                          else "rrf" for unit, _ in asked]
    results = searches([SearchRequest(
        query=req.query, owner=req.owner, session_id=req.session_id, k=req.k, method=how,
        preset=req.preset, units=units, as_of=as_of, trace=req.trace and unit == "message",
        metadata=req.metadata if unit == "message" else None)
        for (unit, units), how in zip(asked, hows, strict=True)])
    for (unit, _), how, result in zip(asked, hows, results, strict=True):
        messages, facts, episodes = pieces(result)
        found[unit] = {"message": messages, "fact": facts, "episode": episodes}[unit]
        report.append({"unit": unit, "method": how, "found": len(found[unit])})
        if result.trace is not None:
            rounds = [r.model_dump(mode="json") for r in result.trace.rounds]
            report[-1]["trace"] = result.trace.model_dump(mode="json", exclude={"rounds"})
    skills: list[Piece] = []
    if "skill" in req.units and best_skill is not None:
        skills = [skill_piece(skill) for skill in best_skill()]
        report.append({"unit": "skill", "method": "rrf", "found": len(skills)})
    chunks: list[Piece] = []
    if "chunk" in req.units and best_chunks is not None:
        chunks = chunk_pieces(best_chunks())
        report.append({"unit": "chunk", "method": chunk_method(method), "found": len(chunks)})
    candidates = prioritise(found["message"], found["fact"], found["episode"], skills, chunks)
    packed = pack(candidates, req.max_tokens, as_of)
    trace = None
    if req.trace:
        trace = ContextTrace(searches=report, rounds=rounds, candidates=packed.candidates,
                             duplicates=packed.duplicates, kept=len(packed.items),
                             over_budget=packed.over_budget)
    return ContextResult(query=req.query, owner=req.owner, as_of=as_of, method=method,
                         context=packed.context, context_tokens=packed.tokens,
                         max_tokens=req.max_tokens, items=packed.items, trace=trace)
