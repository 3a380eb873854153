"""Parsing a document into its text and blocks: headings and paragraphs, each with its character
offsets in the text (`Parsed.text`), plus the metadata the document states (title, authors, date,
DOI, URL).

The text is the ground truth every citation points into: for plain text and Markdown it is the
content as sent (offsets point into the source itself); for HTML and PDF, the text extracted from
it. Libraries, not hand-written parsers: markdown-it-py (CommonMark, its tokens carry the source
lines of each block), Beautiful Soup (lenient HTML parsing, the standard library's parser
underneath: no compiled dependency), pypdf (pure-Python PDF text layer; BSD). A PDF without a
text layer is refused (there is no OCR), as is a file that does not parse.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from dataclasses import dataclass, field
from typing import Literal

from graphmem.errors import InvalidInput, TooLarge

MEDIA_TYPES = {"text/plain": "text", "text/markdown": "markdown", "text/x-markdown": "markdown",
               "text/html": "html", "application/xhtml+xml": "html",
               "application/pdf": "pdf"}
"""Media types read, and the parser of each (parameters such as ``charset`` are ignored)."""
SUFFIXES = {".txt": "text/plain", ".text": "text/plain", ".md": "text/markdown",
            ".markdown": "text/markdown", ".html": "text/html", ".htm": "text/html",
            ".pdf": "application/pdf"}
MAX_PDF_PAGES = 2000
HEADING_LINE = 80
"""A plain-text line is taken as a heading when it is at most this long, of at most
`HEADING_WORDS` words, starts with a capital and ends without sentence punctuation."""
HEADING_WORDS = 8
TITLE_LINE = 300
"""A first line of plain text at most this long, without sentence punctuation, is the title."""

BlockKind = Literal["heading", "paragraph"]


class UnsupportedMedia(InvalidInput):
    """A media type no parser reads (HTTP 415)."""

    status = 415
    title = "unsupported media type"


@dataclass(frozen=True)
class Block:
    kind: BlockKind
    start: int
    end: int
    level: int = 0
    """A heading's level (1 = top)."""
    title: str = ""
    """A heading's text."""


@dataclass
class Parsed:
    text: str
    blocks: list[Block]
    title: str | None = None
    authors: list[str] = field(default_factory=list)
    published: str | None = None
    doi: str | None = None
    url: str | None = None


def parser_of(media_type: str) -> str:
    """The parser for a media type (UnsupportedMedia, naming ``media_type``, for any other)."""
    base = media_type.split(";", 1)[0].strip().lower()
    if base not in MEDIA_TYPES:
        raise UnsupportedMedia("media_type", f"{base!r} is not read; send one of "
                               + ", ".join(sorted(set(MEDIA_TYPES))))
    return MEDIA_TYPES[base]


def parse(content: str | bytes, media_type: str, max_chars: int | None = None) -> Parsed:
    """Parse ``content`` (text, or bytes: decoded as UTF-8; a PDF: its bytes, or base64 text).
    InvalidInput (HTTP 422) names ``content`` for a file that does not parse, a PDF with no text
    layer, or text with nothing in it; TooLarge names it beyond ``max_chars`` of text."""
    kind = parser_of(media_type)
    if kind == "pdf":
        parsed = _pdf(_pdf_bytes(content))
    else:
        text = _decoded(content)
        parsed = _markdown(text) if kind == "markdown" else (
            _html(text) if kind == "html" else _plain(text))
    if not parsed.text.strip() or not parsed.blocks:
        raise InvalidInput("content", "the document holds no text")
    if max_chars is not None and len(parsed.text) > max_chars:
        raise TooLarge("content", f"the document's text is {len(parsed.text)} characters; "
                       f"at most {max_chars}", limit=max_chars, actual=len(parsed.text))
    _recognise(parsed)
    return parsed


def _decoded(content: str | bytes) -> str:
    if isinstance(content, str):
        return content
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput("content", f"not UTF-8 text: {exc.reason} at byte {exc.start}") \
            from exc


def _pdf_bytes(content: str | bytes) -> bytes:
    if isinstance(content, bytes):
        return content
    try:
        return base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInput("content", "a PDF sent as JSON is base64 of its bytes") from exc


# --- plain text -----------------------------------------------------------------------------
_LINE = re.compile(r"[^\n]+")


def _plain(text: str) -> Parsed:
    """Each non-blank line is a block: a paragraph, or a heading (`_heading_line`); the first
    line is the title when it looks like one."""
    blocks: list[Block] = []
    title = None
    for i, m in enumerate(_LINE.finditer(text)):
        start, end = _trimmed(text, m.start(), m.end())
        if start == end:
            continue
        line = text[start:end]
        if i == 0 and len(line) <= TITLE_LINE and line[-1] not in ".!?;,":
            title = line
        if i > 0 and _heading_line(line):
            blocks.append(Block("heading", start, end, 1, line.rstrip(":")))
        else:
            blocks.append(Block("paragraph", start, end))
    return Parsed(text, blocks, title)


def _heading_line(line: str) -> bool:
    words = line.split()
    return (len(line) <= HEADING_LINE and 0 < len(words) <= HEADING_WORDS
            and line[0].isupper() and line[-1] not in ".!?;,\"')]"
            and not any(ch.isdigit() for ch in line[:4]) and ":" not in line.rstrip(":"))


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# --- Markdown -------------------------------------------------------------------------------
def _markdown(text: str) -> Parsed:
    """Top-level blocks of markdown-it-py's token stream, by their source lines: headings
    (ATX and setext) and everything else as paragraphs (a list, a table or a code block is one
    block). Offsets point into the Markdown source."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))
    tokens = md.parse(text)
    blocks: list[Block] = []
    title = None
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.map is None or tok.nesting == -1:
            continue
        start, end = _trimmed(text, starts[tok.map[0]], starts[min(tok.map[1], len(lines))])
        if start == end:
            continue
        if tok.type == "heading_open":
            inline = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            level = int(tok.tag[1])
            blocks.append(Block("heading", start, end, level, inline or text[start:end]))
            if title is None and level == 1:
                title = inline
        else:
            blocks.append(Block("paragraph", start, end))
    return Parsed(text, blocks, title)


# --- HTML -----------------------------------------------------------------------------------
_HTML_BLOCKS = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "blockquote", "td", "th",
                "dt", "dd", "figcaption", "caption")
_HTML_SKIP = ("script", "style", "noscript", "template", "nav", "footer", "header", "aside",
              "form", "svg")
_SPACE = re.compile(r"\s+")


def _html(source: str) -> Parsed:
    """The visible text of the page's block elements (headings, paragraphs, list items, cells,
    ...), one block each, separated by blank lines; scripts, styles, navigation, headers and
    footers left out. A page with no such element gives its body's text."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(source, "html.parser")
    meta = _html_meta(soup)
    for tag in soup.find_all(_HTML_SKIP):
        tag.decompose()
    parts: list[tuple[BlockKind, int, str]] = []
    for el in soup.find_all(_HTML_BLOCKS):
        if el.find_parent(_HTML_BLOCKS) is not None:
            continue  # its text is its block ancestor's
        words = _SPACE.sub(" ", el.get_text(" ")).strip()
        if not words:
            continue
        heading = el.name[0] == "h" and el.name[1:].isdigit()
        parts.append(("heading" if heading else "paragraph", int(el.name[1]) if heading else 0,
                      words))
    if not parts:
        body = soup.body or soup
        parts = [("paragraph", 0, p) for p in
                 (_SPACE.sub(" ", t).strip() for t in body.get_text("\n").split("\n\n")) if p]
    text, blocks = "", []
    for kind, level, words in parts:
        if text:
            text += "\n\n"
        blocks.append(Block(kind, len(text), len(text) + len(words), level,
                            words if kind == "heading" else ""))
        text += words
    title = meta.pop("title", None) or next(
        (b.title for b in blocks if b.kind == "heading" and b.level == 1), None)
    parsed = Parsed(text, blocks, title)
    parsed.authors = [meta["author"]] if meta.get("author") else []
    parsed.published, parsed.doi, parsed.url = (meta.get("date"), meta.get("doi"),
                                                meta.get("url"))
    return parsed


_META_NAMES = {"citation_title": "title", "dc.title": "title", "og:title": "title",
               "citation_author": "author", "author": "author", "dc.creator": "author",
               "citation_date": "date", "citation_publication_date": "date",
               "article:published_time": "date", "dc.date": "date", "citation_doi": "doi",
               "dc.identifier": "doi", "og:url": "url"}


def _html_meta(soup: object) -> dict[str, str]:
    from bs4 import BeautifulSoup, Tag

    assert isinstance(soup, BeautifulSoup)
    found: dict[str, str] = {}
    for tag in soup.find_all("meta"):
        if not isinstance(tag, Tag):
            continue
        name = str(tag.get("name") or tag.get("property") or "").lower()
        value = str(tag.get("content") or "").strip()
        if name in _META_NAMES and value:
            found.setdefault(_META_NAMES[name], value)
    if soup.title is not None and soup.title.string and soup.title.string.strip():
        found.setdefault("title", soup.title.string.strip())
    link = soup.find("link", rel="canonical")
    if isinstance(link, Tag) and link.get("href"):
        found.setdefault("url", str(link.get("href")))
    return found


# --- PDF ------------------------------------------------------------------------------------
def _pdf(data: bytes) -> Parsed:
    """The text layer of every page (pypdf), pages separated by blank lines; within a page,
    blank lines separate paragraphs, and lines are joined. The title and author come from the
    PDF's metadata when set."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise InvalidInput("content", "the PDF is encrypted")
        if len(reader.pages) > MAX_PDF_PAGES:
            raise TooLarge("content", f"the PDF has {len(reader.pages)} pages; at most "
                           f"{MAX_PDF_PAGES}", limit=MAX_PDF_PAGES, actual=len(reader.pages))
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, AssertionError) as exc:
        raise InvalidInput("content", f"not a readable PDF: {exc}") from exc
    if not any(p.strip() for p in pages):
        raise InvalidInput("content", "the PDF has no text layer (scanned pages?); graphmem "
                           "does no OCR: send its text instead")
    text, blocks = "", []
    for page in pages:
        for para in re.split(r"\n\s*\n", page):
            words = _SPACE.sub(" ", para).strip()
            if not words:
                continue
            if text:
                text += "\n\n"
            blocks.append(Block("paragraph", len(text), len(text) + len(words)))
            text += words
    parsed = Parsed(text, blocks)
    if info is not None:
        parsed.title = str(info.title).strip() if info.title else None
        parsed.authors = [str(info.author).strip()] if info.author else []
    return parsed


# --- metadata stated in the text ------------------------------------------------------------
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)\]])")
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
_DATE = re.compile(r"(?m)^\s*(?:date:\s*)?(\d{4}-\d{2}-\d{2})\s*$", re.I)
_AUTHORS = re.compile(r"(?m)^\s*(?:authors?|by):\s*(.+)$", re.I)
_NAME = r"[^\W\d][\w'’.\- ]+, [\w'’.\- ]+"
_AUTHOR_LIST = re.compile(rf"^{_NAME}(?:; {_NAME})+$")
HEAD_CHARS = 3000
"""Metadata is looked for in this many leading characters of the text."""


def _recognise(parsed: Parsed) -> None:
    """Fill what the document states near its top and the parser did not find: DOI, URL, a
    date alone on a line, and authors (an ``Authors:`` line, or a line ``Last, First; Last,
    First; ...``)."""
    head = parsed.text[:HEAD_CHARS]
    if parsed.doi is None and (m := _DOI.search(head)):
        parsed.doi = m.group(1)
    if parsed.url is None and (m := _URL.search(head)):
        parsed.url = m.group(0)
    if parsed.published is None and (m := _DATE.search(head)):
        parsed.published = m.group(1)
    if not parsed.authors:
        if m := _AUTHORS.search(head):
            parsed.authors = [a.strip() for a in re.split(r";|,(?![^,;]*;)| and ", m.group(1))
                              if a.strip()][:100]
        else:
            for line in head.splitlines()[:12]:
                if _AUTHOR_LIST.match(line.strip()):
                    parsed.authors = [a.strip() for a in line.split(";") if a.strip()][:100]
                    break
