"""Putting a downloaded model into the model cache safely: it is assembled in a temporary folder
beside its final place and renamed into place, so an interrupted download or a concurrent
process never leaves a half-written model; a ``SOURCE`` file says where it came from."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

WRITABLE = "set GRAPHMEM_EMBEDDING_CACHE_DIR to a writable folder"


def install(cache_dir: Path, name: str, fill: Callable[[Path], str | None], ready: str,
            fix: str = WRITABLE) -> Path:
    """``cache_dir / name``: ``fill(tmp)`` writes the model's files into a fresh temporary folder
    and returns the text of its ``SOURCE`` (None: no such file); the folder is then renamed into
    place. When another process got there first, its copy (which has the file ``ready``) is
    kept. OSError names ``fix`` when the cache is not writable; whatever ``fill`` raises leaves
    nothing behind."""
    folder = cache_dir / name
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=cache_dir))
    except OSError as exc:
        raise OSError(f"cannot write the model cache {cache_dir} ({exc}). Fix: {fix}") from exc
    try:
        source = fill(tmp)
        if source is not None:
            (tmp / "SOURCE").write_text(source, encoding="utf-8")
        tmp.chmod(0o755)
        try:
            tmp.rename(folder)
        except OSError:  # another process finished first: use its copy
            if not (folder / ready).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def unzip(archive: Path, members: Mapping[str, str], dest: Path) -> None:
    """Copy each member of the zip ``archive`` to ``dest / members[member]``."""
    with zipfile.ZipFile(archive) as zf:
        for member, name in members.items():
            with zf.open(member) as src, (dest / name).open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)


def digest(path: Path, algorithm: str) -> str:
    """The hex digest of a file (``sha1``, ``sha256``)."""
    h = hashlib.new(algorithm)
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
