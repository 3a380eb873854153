"""`graphmem ingest --format document PATH...` against the real store: files, folders (read
recursively) and globs; the media type from the suffix; the key from the path relative to the
folder given (a file given alone: its name); a line per file and a summary; a bad file is
reported and the others are stored (exit 1); the same files again are unchanged."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

from typer.testing import CliRunner

from graphmem.cli import app
from graphmem.service import Memory

from .test_documents import FIXTURES


def _tree(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / ".hidden").mkdir()
    shutil.copy(FIXTURES / "guide.md", docs / "guide.md")
    shutil.copy(FIXTURES / "note.txt", docs / "sub" / "note.txt")
    shutil.copy(FIXTURES / "page.html", docs / "sub" / "page.HTM")
    shutil.copy(FIXTURES / "report.pdf", docs / "report.pdf")
    shutil.copy(FIXTURES / "broken.pdf", docs / "broken.pdf")
    (docs / ".hidden" / "secret.md").write_text("# Not read\n\nHidden folders are skipped.\n")
    (docs / "picture.png").write_bytes(b"\x89PNG not a document")
    return docs


def test_a_folder_a_glob_and_a_file(env: None, memory: Memory, tmp_path: Path) -> None:
    who, tenant = f"cli-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:10]}"
    docs = _tree(tmp_path)
    runner = CliRunner()
    base = ["ingest", "--format", "document", "--owner", who, "--tenant", tenant]
    r = runner.invoke(app, [*base, str(docs)])
    assert r.exit_code == 1, r.output  # broken.pdf failed; the others are stored
    assert f"failed     {docs / 'broken.pdf'}: " in r.stderr and "PDF" in r.stderr
    created = sorted(line.split()[1] for line in r.stdout.splitlines()
                     if line.startswith("created"))
    assert created == ["guide.md", "report.pdf", "sub/note.txt", "sub/page.HTM"]
    assert "5 files: 4 created, 0 versioned, 0 unchanged, 1 failed" in r.stdout
    tm = memory.for_tenant(tenant)
    stored = {d.key: d for d in tm.documents.list(who)}
    assert sorted(stored) == created
    assert {k: d.media_type for k, d in stored.items()} == {
        "guide.md": "text/markdown", "report.pdf": "application/pdf",
        "sub/note.txt": "text/plain", "sub/page.HTM": "text/html"}

    (docs / "guide.md").write_text((docs / "guide.md").read_text().replace("ninety", "thirty"))
    r = runner.invoke(app, [*base, str(docs / "**" / "*.md"), str(docs / "sub" / "note.txt")])
    assert r.exit_code == 0, r.output
    lines = sorted(r.stdout.splitlines()[:-1])
    assert [line.split()[:2] for line in lines] == [["created", "note.txt"],
                                                    ["versioned", "guide.md"]]
    assert "2 files: 1 created, 1 versioned, 0 unchanged, 0 failed" in r.stdout
    assert tm.documents.get(stored["guide.md"].id).versions[0].version == 2

    r = runner.invoke(app, [*base, str(docs / "guide.md"), str(docs / "sub" / "note.txt")])
    assert r.exit_code == 0, r.output
    assert "2 files: 0 created, 0 versioned, 2 unchanged, 0 failed" in r.stdout


def test_bad_paths_and_options(env: None, tmp_path: Path) -> None:
    docs = _tree(tmp_path)
    runner = CliRunner()
    r = runner.invoke(app, ["ingest", "--format", "document", str(docs)])
    assert r.exit_code == 2 and "--owner" in r.output
    r = runner.invoke(app, ["ingest", "--owner", "a", str(docs / "guide.md")])
    assert r.exit_code == 2 and "--owner" in r.output
    r = runner.invoke(app, ["ingest", str(docs / "guide.md"), str(docs / "report.pdf")])
    assert r.exit_code == 2
    who = f"cli-{uuid.uuid4().hex[:8]}"
    base = ["ingest", "--format", "document", "--owner", who, "--tenant", "cli-docs"]
    r = runner.invoke(app, [*base, str(tmp_path / "missing.md"), str(docs / "*.nothing"),
                            str(docs / "picture.png"), str(docs / "sub" / "note.txt")])
    assert r.exit_code == 1, r.output
    assert "missing.md: no such file or folder" in r.stderr
    assert "*.nothing: no file matches" in r.stderr
    assert "picture.png: .png is not read" in r.stderr
    assert "4 files: 1 created, 0 versioned, 0 unchanged, 3 failed" in r.stdout
    other = tmp_path / "note.txt"
    other.write_text("Another note.\n")
    r = runner.invoke(app, [*base, str(docs / "sub" / "note.txt"), str(other)])
    assert r.exit_code == 1 and "its key 'note.txt' is " in r.stderr, r.output
    assert "2 files: 0 created, 0 versioned, 1 unchanged, 1 failed" in r.stdout
