"""Documents as the API sends and returns them (pure pydantic): a document to store, its versions,
sections and chunks, and chunk search with citations."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphmem.models import MAX_KEY_CHARS as MAX_KEY_CHARS  # defined there, used from here too
from graphmem.models import NAME, MetaValue, Scalar, UtcDatetime
from graphmem.models import ChunkHit as ChunkHit
from graphmem.models import DocumentKey as Key

MAX_DOCUMENT_CHARS = 2_000_000
"""The wire bound of one document's content (the ``max_document_chars`` setting may lower it)."""
MediaType = Literal["text/plain", "text/markdown", "text/html", "application/pdf"]
DocumentState = Literal["embedding", "ready"]


class _In(BaseModel):
    """A request body: no unknown field, no value of another JSON type coerced."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)


class DocumentIn(_In):
    """One document to remember. The same ``key`` sent again with other content is a new
    version; with the same content, nothing changes."""

    model_config = ConfigDict(extra="forbid", strict=True, str_strip_whitespace=False)  # as sent

    owner: str = Field(min_length=1, max_length=200, pattern=NAME, examples=["alice"])
    key: Key = Field(description="The client's name for the document, unique per owner; "
                     "versions share it", examples=["handbook/onboarding.md"])
    title: str | None = Field(default=None, max_length=1000, description="Default: the "
                              "document's own title (a first heading, <title>, PDF metadata)")
    source_url: str | None = Field(default=None, max_length=4000)
    media_type: str = Field(default="text/plain", min_length=1, max_length=200, description=(
        "text/plain, text/markdown, text/html or application/pdf (PDF content as base64 in "
        "JSON, or as a multipart file)"))
    content: str = Field(min_length=1, max_length=MAX_DOCUMENT_CHARS, description=(
        "The text (a PDF: base64 of its bytes)"))
    metadata: dict[Annotated[str, Field(min_length=1, max_length=200)], MetaValue] = Field(
        default_factory=dict, max_length=64)
    valid_from: UtcDatetime | None = Field(
        default=None, description="When this content became true (default: now); the version "
        "it supersedes is valid until then")
    reason: str | None = Field(default=None, max_length=1000,
                               description="Why this version replaces the previous one")


class DocumentWrite(BaseModel):
    """What storing a document did."""

    id: str = Field(description="The version's id")
    key: str
    owner: str
    version: int
    action: Literal["created", "versioned", "unchanged"]
    supersedes: str | None = Field(description="The version it replaced")
    state: DocumentState = Field(description="ready: every chunk is embedded; embedding: the "
                                 "background worker embeds the rest (the text is stored and "
                                 "searchable by its words meanwhile)")
    sections: int
    chunks: int
    embedded_now: int = Field(description="Chunks embedded by this request")
    reused: int = Field(description="Chunks whose embedding an earlier version gave")
    job: str | None = Field(default=None, description="The embedding job, if any")


class Section(BaseModel):
    id: str
    path: list[str] = Field(description="The headings from the top down to this one")
    level: int
    order: int
    start: int = Field(description="Character offset in the document's text (inclusive)")
    end: int = Field(description="Character offset (exclusive)")


class Document(BaseModel):
    """One version of a document."""

    id: str
    owner: str
    key: str
    version: int
    title: str | None
    source_url: str | None
    media_type: str
    metadata: dict[str, Scalar]
    authors: list[str] = Field(description="Recognised in the text or PDF metadata")
    published: str | None = Field(description="A date recognised in the text")
    doi: str | None
    state: DocumentState
    chars: int
    chunks: int
    valid_from: datetime
    valid_to: datetime | None = Field(description="When the next version took over")
    recorded_at: datetime
    reason: str | None
    content_hash: str


class DocumentDetail(BaseModel):
    document: Document
    versions: list[Document] = Field(description="Every version of the key, newest first")
    sections: list[Section]
    text: str | None = Field(default=None, description="The version's text (with_text=true): "
                             "every chunk's offsets point into it")


class ChunkSearch(_In):
    """Chunk search over one owner's documents."""

    query: str = Field(min_length=1, max_length=4000)
    owner: str = Field(min_length=1, max_length=200, pattern=NAME)
    k: int = Field(default=10, ge=1, le=100)
    documents: list[Key] | None = Field(default=None, min_length=1, max_length=100,
                                        description="Only these document keys")
    metadata: dict[Annotated[str, Field(min_length=1, max_length=200)], MetaValue] | None = \
        Field(default=None, min_length=1, max_length=16,
              description="Only documents whose metadata has each of these values")
    as_of: UtcDatetime | None = Field(default=None, description="The versions valid then "
                                      "(default: the current ones)")
    method: Literal["vector", "fulltext", "rrf"] = "rrf"
    neighbours: int = Field(default=0, ge=0, le=3, description="Neighbouring chunks of the "
                            "same section added around each hit (each way)")


class ChunkResult(BaseModel):
    query: str
    chunks: list[ChunkHit] = Field(description="Best first; neighbours after their hit")


class Topic(BaseModel):
    """A topic of an owner's tree: a category of its documents (clusters of them, and parts of a
    large one), or below the categories a heading of one of their documents."""

    id: str = Field(description="A category's is kept by a rebuild while its members stay the "
                    "same; a heading's is its section's id")
    owner: str
    kind: Literal["category", "heading"] = Field(
        default="category", description="category: a cluster of the owner's documents (or a "
        "part of one); heading: a section of one document, under the deepest category its "
        "document is filed in (its own heading tree gives the tree's lower levels)")
    level: int = Field(description="1: a category; 2: a part of one; below: the headings, "
                       "counted on from their category's level")
    parent: str | None = None
    label: str = Field(description="A category: the label an LLM wrote (when one is "
                       "configured), else keyphrases of its members (class-based TF-IDF); a "
                       "heading: the heading")
    keyphrases: str | None = Field(default=None, description="A category's keyphrases "
                                   "(class-based TF-IDF over its members), LLM or not")
    summary: str | None = Field(default=None, description="A short summary an LLM wrote of "
                                "the category (none without an LLM)")
    label_model: str | None = Field(default=None, description="The model that wrote the label "
                                    "and summary (none: the keyphrases are the label)")
    documents: int
    document: str | None = Field(default=None, description="A heading's document version")
    key: str | None = Field(default=None, description="A heading's document key")
    first_at: datetime = Field(description="The earliest valid_from of its documents")
    last_at: datetime


class TopicMember(BaseModel):
    id: str
    key: str
    title: str | None


class TopicDetail(BaseModel):
    topic: Topic
    members: list[TopicMember]
    children: list[str]
