"""Parsers on real small files of each format (tests/fixtures/documents/): headings, offsets,
recognised metadata, and bad files refused naming the field."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from graphmem.documents.parse import UnsupportedMedia, parse, parser_of
from graphmem.errors import InvalidInput, TooLarge

FIXTURES = Path(__file__).parents[1] / "fixtures" / "documents"


def _read(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_markdown_headings_and_offsets_point_into_the_source() -> None:
    source = _read("guide.md").decode()
    parsed = parse(source, "text/markdown")
    assert parsed.text == source and parsed.title == "Onboarding guide"
    heads = [(b.level, b.title) for b in parsed.blocks if b.kind == "heading"]
    assert heads == [(1, "Onboarding guide"), (2, "Accounts"), (3, "Passwords"), (2, "Expenses")]
    paras = [source[b.start:b.end] for b in parsed.blocks if b.kind == "paragraph"]
    assert paras[-1].startswith("- Travel") and paras[-1].endswith("allowance.")


def test_plain_text_lines_headings_and_title() -> None:
    source = _read("note.txt").decode()
    parsed = parse(source, "text/plain")
    assert parsed.title == "Field notes on the lighthouse keepers"
    assert [b.title for b in parsed.blocks if b.kind == "heading"] == ["Weather", "Supplies"]
    for b in parsed.blocks:
        assert source[b.start:b.end] == source[b.start:b.end].strip()


def test_html_visible_text_headings_and_metadata() -> None:
    parsed = parse(_read("page.html"), "text/html; charset=utf-8")
    assert parsed.title == "Tidal energy primer"
    assert parsed.authors == ["Ada Marsh"] and parsed.doi == "10.1234/tidal.2020.7"
    assert [b.title for b in parsed.blocks if b.kind == "heading"] == [
        "Tidal energy primer", "Barrages", "Stream generators"]
    assert "tracking" not in parsed.text and "Home" not in parsed.text
    for b in parsed.blocks:
        assert parsed.text[b.start:b.end].strip()


def test_pdf_text_layer_and_its_metadata() -> None:
    for content in (_read("report.pdf"), base64.b64encode(_read("report.pdf")).decode()):
        parsed = parse(content, "application/pdf")
        assert parsed.title == "Glacier retreat report" and parsed.authors == ["Ines Berg"]
        assert "gone by 2060" in parsed.text


def test_text_metadata_is_recognised() -> None:
    text = ("A study of things\nhttps://example.org/a\nDoe, Jane; Roe, Rick\n2020-03-01\n"
            "DOI:10.1000/xyz.1\nThe body.")
    parsed = parse(text, "text/plain")
    assert parsed.url == "https://example.org/a" and parsed.doi == "10.1000/xyz.1"
    assert parsed.published == "2020-03-01" and parsed.authors == ["Doe, Jane", "Roe, Rick"]


@pytest.mark.parametrize(("name", "needle"), [("scanned.pdf", "no text layer"),
                                              ("broken.pdf", "not a readable PDF")])
def test_bad_pdfs_are_refused_naming_content(name: str, needle: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse(_read(name), "application/pdf")
    assert err.value.field == "content" and err.value.status == 422 and needle in str(err.value)


def test_unsupported_media_type_is_415_naming_the_field() -> None:
    with pytest.raises(UnsupportedMedia) as err:
        parser_of("application/msword")
    assert err.value.status == 415 and err.value.field == "media_type"


def test_bad_text_and_limits() -> None:
    with pytest.raises(InvalidInput, match="not UTF-8"):
        parse(b"\xff\xfe\xfa", "text/plain")
    with pytest.raises(InvalidInput, match="holds no text"):
        parse("   \n\n ", "text/markdown")
    with pytest.raises(TooLarge) as err:
        parse("x" * 20, "text/plain", max_chars=10)
    assert err.value.field == "content" and err.value.status == 413
