"""Routes for documents: store a version (JSON, or a multipart upload of the file), read an
owner's documents and one version with its sections, search their chunks, and read an owner's
topic tree and one topic with its members."""

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from graphmem.documents.models import (
    ChunkResult,
    ChunkSearch,
    Document,
    DocumentDetail,
    DocumentIn,
    DocumentWrite,
    Topic,
    TopicDetail,
)
from graphmem.documents.parse import SUFFIXES
from graphmem.errors import InvalidInput
from graphmem.lifecycle.forget import ForgetReport
from graphmem.models import UtcDatetime
from graphmem.tenant_memory import TenantMemory

from .deps import tenant_memory
from .media import is_json

MULTIPART = "multipart/form-data"
UPLOAD_FIELDS = ("owner", "key", "title", "source_url", "media_type", "metadata", "valid_from",
                 "reason")
"""The form fields of an upload beside ``file`` (``metadata`` as a JSON object)."""
_FORM_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["owner", "key", "file"], "additionalProperties": False,
    "properties": {
        "file": {"type": "string", "format": "binary", "description": "The file; its media "
                 "type is the part's Content-Type, else its name's suffix, unless media_type "
                 "names it"},
        **{name: {"type": "string", "maxLength": 4000} for name in UPLOAD_FIELDS},
    }}


router = APIRouter(prefix="/v1")
Id = Annotated[str, Path(min_length=1)]

schema = DocumentIn.model_json_schema(ref_template="#/components/schemas/{model}")

@router.post("/documents", status_code=201, response_model=DocumentWrite, openapi_extra={
    "requestBody": {"required": True, "content": {
        "application/json": {"schema": schema},
        MULTIPART: {"schema": _FORM_SCHEMA}}}})
async def post_document(
    request: Request, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> DocumentWrite:
    """Store a document as a new version of its key (the same content again changes
    nothing: 201 with action ``unchanged``). JSON, or a multipart upload with the file in
    ``file``. 415 for a media type no parser reads, 422 for a file that does not parse or
    a PDF without a text layer, 413 naming ``content`` beyond the character or chunk
    limits. Nothing is partly written."""
    doc, content = await _read(request)
    written: DocumentWrite = await run_in_threadpool(mem.documents.ingest, doc, content)
    return written

@router.get("/documents", response_model=list[Document])
def list_documents(
    mem: Annotated[TenantMemory, Depends(tenant_memory)],
    owner: Annotated[str, Query(min_length=1)],
    after: Annotated[str, Query(max_length=500)] = "",
    limit: Annotated[int, Query(ge=1, le=500)] = 50, history: bool = False,
    key: Annotated[str | None, Query(min_length=1, max_length=500)] = None,
    as_of: Annotated[UtcDatetime | None, Query()] = None,
) -> list[Document]:
    """An owner's documents by key: the current version of each (every version with
    ``history``); with ``key`` and ``as_of``, the version of that key valid then."""
    if as_of is not None:
        if key is None:
            raise InvalidInput("key", "as_of reads one document key: give key too")
        return [mem.documents.version_at(owner, key, as_of).document]
    found: list[Document] = mem.documents.list(owner, after, limit, history)
    return [d for d in found if key is None or d.key == key]

@router.get("/documents/{document_id:path}", response_model=DocumentDetail)
def get_document(
    document_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)], with_text: bool = False,
) -> DocumentDetail:
    """One version: its state (``embedding`` while the worker embeds it), every version of
    its key, its sections; with ``with_text``, the text its chunks' offsets point into."""
    return mem.documents.get(document_id, with_text)

@router.delete("/documents/{document_id:path}", response_model=ForgetReport)
def forget_document(
    document_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> ForgetReport:
    """Forget a document: every version of its key, their sections and chunks, in one
    transaction, audited (kind ``document``). Again: ``already_forgotten``; never stored:
    404."""
    return mem.documents.forget(document_id)

@router.post("/documents/search", response_model=ChunkResult)
def search_documents(
    req: ChunkSearch, mem: Annotated[TenantMemory, Depends(tenant_memory)],
) -> ChunkResult:
    """The owner's chunks best matching ``query`` (vector and fulltext fused by RRF), each
    with its citation: document, version, section path, character offsets."""
    return mem.documents.search(req)

@router.get("/topics", response_model=list[Topic])
def list_topics(
    mem: Annotated[TenantMemory, Depends(tenant_memory)],
    owner: Annotated[str, Query(min_length=1)],
) -> list[Topic]:
    """An owner's topic tree: its categories (kind ``category``: level 1, their parts at level
    2, each naming its parent) with label, keyphrases, an LLM's summary when one wrote it,
    number of documents and first/last times; below them each filed document's own headings
    (kind ``heading``: the section's id, the heading as label, its document and key, under the
    section above it or the deepest category of its document). Parents come before their
    children. Empty before the first build."""
    return mem.documents.topics(owner)

@router.get("/topics/{topic_id:path}", response_model=TopicDetail)
def get_topic(topic_id: Id, mem: Annotated[TenantMemory, Depends(tenant_memory)]) -> TopicDetail:
    """One topic with its member documents (the current versions) and its children: a
    category's subtopics (and, below a category with no parts, its documents' top-level
    headings); a heading's document and subsections. A topic of an owner the key may not read
    is a 404, as an unknown id is."""
    return mem.documents.topic(topic_id)


async def _read(request: Request) -> tuple[DocumentIn, bytes | None]:
    """The document of a JSON body or a multipart upload (the upload's bytes beside it)."""
    content_type = request.headers.get("content-type", "")
    if is_json(content_type):
        return _validated(await request.body()), None
    if content_type.split(";", 1)[0].strip().lower() != MULTIPART:
        raise HTTPException(415, detail=f"the body must be application/json or {MULTIPART} "
                            f"(not {content_type or 'none named'})",
                            headers={"Accept-Post": f"application/json, {MULTIPART}"})
    form = await request.form(max_files=1, max_fields=len(UPLOAD_FIELDS))
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise InvalidInput("file", "a multipart upload sends the document as the part 'file'")
    fields: dict[str, Any] = {}
    for name, value in form.multi_items():
        if name == "file":
            continue
        if name not in UPLOAD_FIELDS or not isinstance(value, str):
            raise InvalidInput(name, f"unknown form field; the fields are file, "
                               f"{', '.join(UPLOAD_FIELDS)}")
        fields[name] = value
    if "metadata" in fields:
        try:
            fields["metadata"] = json.loads(fields["metadata"])
        except ValueError as exc:
            raise InvalidInput("metadata", "a JSON object") from exc
    if "media_type" not in fields:
        suffix = "." + (upload.filename or "").rsplit(".", 1)[-1].lower()
        part = (upload.content_type or "").split(";", 1)[0].strip().lower()
        fields["media_type"] = part if part and part != "application/octet-stream" else \
            SUFFIXES.get(suffix, part or "application/octet-stream")
    data = await upload.read()
    fields["content"] = "(upload)"
    return _validated(json.dumps(fields).encode()), data


def _validated(body: bytes) -> DocumentIn:
    try:
        return DocumentIn.model_validate_json(body)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]) from exc
