"""Message metadata as the store matches it: each (key, value) pair of a message's metadata
encoded as one canonical string (`pairs`), kept in a list on the message and its sentence
units, and a search filter encoded as one `Clause` per key (`condition`): the pairs of which
one must be there (a value, a list, ``eq``, ``in``), the pairs that must not (``ne``, ``nin``),
whether the key must be there (``exists``), and a range its number must fall in (``gt``,
``gte``, ``lt``, ``lte``: the value read from the pair's text after the key's prefix). Cypher
checks a clause with list membership, a prefix and ``toFloat`` (the predicate every filtered
query repeats, `PREDICATE`); `matches` is the same check in Python. Pure functions, no I/O."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphmem.models import MetadataFilter, Scalar


@dataclass(frozen=True)
class Clause:
    """What one key of a filter asks of a message's encoded pairs (every part given must hold)."""

    prefix: str
    """The text every pair of the key starts with: ``["channel",``."""
    any: tuple[str, ...] | None = None
    """One of these pairs must be there (a value, a list of values, ``eq``, ``in``)."""
    none: tuple[str, ...] = ()
    """None of these may be (``ne``, ``nin``; a message without the key passes)."""
    has: bool | None = None
    """The key must be there (True) or not (False), with any value (``exists``)."""
    low: float | None = None
    """The key's value must be a number >= low (``gte``; ``gt``: the next float above)."""
    high: float | None = None
    """... and <= high (``lte``; ``lt``: the next float below)."""

    def param(self) -> dict[str, Any]:
        """The clause as the Cypher queries read it (`PREDICATE`)."""
        return {"prefix": self.prefix, "any": list(self.any) if self.any is not None else None,
                "none": list(self.none), "has": self.has, "low": self.low, "high": self.high}


Condition = tuple[Clause, ...]
"""A filter as the store reads it: a message matches when it passes every clause."""

PREDICATE = """($metadata IS NULL OR all(c IN $metadata WHERE
  (c.any IS NULL OR any(p IN c.any WHERE p IN X.metadata_pairs))
  AND none(p IN c.none WHERE p IN coalesce(X.metadata_pairs, []))
  AND (c.has IS NULL
       OR c.has = any(p IN coalesce(X.metadata_pairs, []) WHERE p STARTS WITH c.prefix))
  AND (c.low IS NULL AND c.high IS NULL
       OR any(v IN [p IN coalesce(X.metadata_pairs, []) WHERE p STARTS WITH c.prefix
                    | toFloat(substring(p, size(c.prefix), size(p) - size(c.prefix) - 1))]
              WHERE (c.low IS NULL OR v >= c.low) AND (c.high IS NULL OR v <= c.high)))))"""
"""The metadata predicate of every query that filters by metadata, for the node ``X`` that
carries the pairs (a message or a sentence unit; a test checks each file holds it verbatim)."""


def canonical(value: Scalar) -> Scalar:
    """The value as matched: a whole float is its integer (JSON does not tell 1 from 1.0, and
    neither do the JavaScript and Python clients that send it); booleans stay booleans."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def pair(key: str, value: Scalar) -> str:
    """One (key, value) pair as one string: the JSON array ``[key, value]``, compact, with its
    non-ASCII characters as they are (never ambiguous: a key holds any character)."""
    return json.dumps([key, canonical(value)], ensure_ascii=False, separators=(",", ":"))


def pairs(metadata: Mapping[str, Scalar]) -> list[str]:
    """A message's metadata as its encoded pairs, sorted."""
    return sorted(pair(k, v) for k, v in metadata.items())


def _prefix(key: str) -> str:
    return json.dumps([key], ensure_ascii=False, separators=(",", ":"))[:-1] + ","


def _clause(key: str, wanted: Any) -> Clause:
    """One key of a filter (a value, a list of values, or an object of operators)."""
    if not isinstance(wanted, dict):
        values = wanted if isinstance(wanted, list) else [wanted]
        return Clause(_prefix(key), any=tuple(pair(key, v) for v in values))
    ops: dict[str, Any] = wanted
    any_of = ops.get("in", [ops["eq"]] if "eq" in ops else None)
    none_of = [*([ops["ne"]] if "ne" in ops else []), *ops.get("nin", [])]
    low = float(ops["gte"]) if "gte" in ops else (
        math.nextafter(float(ops["gt"]), math.inf) if "gt" in ops else None)
    high = float(ops["lte"]) if "lte" in ops else (
        math.nextafter(float(ops["lt"]), -math.inf) if "lt" in ops else None)
    return Clause(_prefix(key),
                  any=tuple(pair(key, v) for v in any_of) if any_of is not None else None,
                  none=tuple(pair(key, v) for v in none_of), has=ops.get("exists"),
                  low=low, high=high)


def condition(wanted: MetadataFilter | None) -> Condition | None:
    """A filter (``{"channel": "slack", "priority": [1, 2], "score": {"gte": 0.5}}``: every key,
    what it asks) as the store reads it; None without a filter."""
    if not wanted:
        return None
    return tuple(_clause(k, v) for k, v in sorted(wanted.items()))


def _number(text: str) -> float | None:
    """A pair's value text as Cypher's ``toFloat`` reads it: a JSON number, else None."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def passes(stored: Sequence[str] | None, c: Clause) -> bool:
    """Whether encoded pairs ``stored`` pass one clause (as `PREDICATE` checks it)."""
    have = set(stored or ())
    if c.any is not None and not any(p in have for p in c.any):
        return False
    if any(p in have for p in c.none):
        return False
    of_key = [p for p in have if p.startswith(c.prefix)]
    if c.has is not None and c.has != bool(of_key):
        return False
    if c.low is None and c.high is None:
        return True
    values = [_number(p[len(c.prefix):-1]) for p in of_key]
    return any(v is not None and (c.low is None or v >= c.low)
               and (c.high is None or v <= c.high) for v in values)


def matches(stored: Sequence[str] | None, cond: Condition | None) -> bool:
    """Whether a message with the encoded pairs ``stored`` passes ``cond`` (as Cypher checks
    it: `queries/recall/metadata_matching`)."""
    return cond is None or all(passes(stored, c) for c in cond)


def token(tenant: str, owner: str, encoded: str) -> str:
    """The metadata index's token of one encoded pair of an owner: 24 hex digits of a hash of
    tenant, owner and pair (never the value itself), one word to the whitespace analyser."""
    key = "\x1f".join((tenant, owner, encoded))
    return hashlib.blake2b(key.encode("utf-8"), digest_size=12).hexdigest()


def tokens(tenant: str, owner: str, encoded: Sequence[str]) -> str | None:
    """A message's ``metadata_tokens`` (None without metadata: not indexed)."""
    return " ".join(token(tenant, owner, p) for p in encoded) or None


def token_query(tenant: str, owner: str, clauses: Sequence[Mapping[str, Any]]) -> str | None:
    """The Lucene query over ``metadata_tokens`` of the clauses (as `Clause.param` gives them)
    that name their values: every such key, one of its values. None when no clause does (a
    range, ``ne`` or ``exists`` alone): the index cannot narrow those."""
    named = [c["any"] for c in clauses if c["any"]]
    if not named:
        return None
    return " AND ".join(
        "metadata_tokens:(" + " OR ".join(token(tenant, owner, p) for p in accepted) + ")"
        for accepted in named)
