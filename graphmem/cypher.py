"""Named Cypher: the ``.cypher`` files of the repository's ``cypher/`` folder, which installs as
the data package ``graphmem.cypher_files`` (setup.py) and is read through importlib.resources,
the same in a checkout (editable install) and in an installed wheel.

Each ``.cypher`` file opens with a ``//`` comment saying its purpose, parameters and columns.
Queries are referred to by their path without extension, e.g. ``queries/messages/write_messages``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

PACKAGE = "graphmem.cypher_files"


def _folder() -> Path:
    found = resources.files(PACKAGE)
    if not isinstance(found, Path):  # e.g. imported from a zip: graphmem is installed as files
        raise RuntimeError(f"{PACKAGE} is not a folder on disk ({found!r}); install graphmem "
                           "with pip (not as a zip)")
    return found


CYPHER_DIR = _folder()


@cache
def load(name: str) -> str:
    """The text of ``cypher/<name>.cypher``. Raises FileNotFoundError for an unknown name."""
    path = CYPHER_DIR / f"{name}.cypher"
    if not path.is_file():
        raise FileNotFoundError(f"no Cypher file named {name!r} under {CYPHER_DIR}")
    return path.read_text(encoding="utf-8")


def statements(text: str) -> list[str]:
    """Split a file of several statements on ``;`` at line ends; drop comment-only parts."""
    out = []
    for part in text.split(";\n"):
        body = "\n".join(ln for ln in part.splitlines() if not ln.strip().startswith("//"))
        if body.strip().rstrip(";").strip():
            out.append(body.strip().rstrip(";"))
    return out


def names(folder: str) -> list[str]:
    """The query names in a folder, e.g. ``names("audit")``, sorted."""
    return sorted(f"{folder}/{p.stem}" for p in (CYPHER_DIR / folder).glob("*.cypher"))
