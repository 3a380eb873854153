"""Message metadata as the store matches it: each (key, value) pair of a message's metadata
encoded as one canonical string (`pairs`), kept in a list on the message and its sentence
units, and a search filter (key -> accepted values) encoded the same way (`condition`), so
that Cypher matches a filter with list membership alone. Pure functions, no I/O."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from graphmem.models import MetadataFilter, Scalar

Condition = tuple[tuple[str, ...], ...]
"""A filter as the store reads it: for each key, the encoded pairs it accepts; a message
matches when, for every key, one of its pairs is among them."""


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


def condition(wanted: MetadataFilter | None) -> Condition | None:
    """A filter (``{"channel": "slack", "priority": [1, 2]}``: every key, one of its values)
    as the store reads it; None without a filter."""
    if not wanted:
        return None
    return tuple(tuple(pair(k, v) for v in (vs if isinstance(vs, list) else [vs]))
                 for k, vs in sorted(wanted.items()))


def matches(stored: Sequence[str] | None, cond: Condition | None) -> bool:
    """Whether a message with the encoded pairs ``stored`` passes ``cond`` (as Cypher checks
    it: `queries/metadata_matching`)."""
    if cond is None:
        return True
    have = set(stored or ())
    return all(any(p in have for p in accepted) for accepted in cond)


def token(tenant: str, owner: str, encoded: str) -> str:
    """The metadata index's token of one encoded pair of an owner: 24 hex digits of a hash of
    tenant, owner and pair (never the value itself), one word to the whitespace analyser."""
    key = "\x1f".join((tenant, owner, encoded))
    return hashlib.blake2b(key.encode("utf-8"), digest_size=12).hexdigest()


def tokens(tenant: str, owner: str, encoded: Sequence[str]) -> str | None:
    """A message's ``metadata_tokens`` (None without metadata: not indexed)."""
    return " ".join(token(tenant, owner, p) for p in encoded) or None


def token_query(tenant: str, owner: str, cond: Condition) -> str:
    """The Lucene query of a filter over ``metadata_tokens``: every key, one of its values."""
    return " AND ".join(
        "metadata_tokens:(" + " OR ".join(token(tenant, owner, p) for p in accepted) + ")"
        for accepted in cond)

