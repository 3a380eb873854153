"""The generated reference pages of the docs site (docs/reference/settings.md from
`graphmem.config.Settings`, docs/reference/cli.md from the Typer app) match the code."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = "run `.venv/bin/python scripts/gen_docs_reference.py` and commit the pages it writes"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs_reference",
                                                  ROOT / "scripts" / "gen_docs_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.mark.parametrize("page", ["settings", "cli"])
def test_the_committed_reference_page_is_what_the_code_generates(page: str) -> None:
    path, make = {"settings": (GEN.SETTINGS_PAGE, GEN.settings_page),
                  "cli": (GEN.CLI_PAGE, GEN.cli_page)}[page]
    assert path.exists(), f"{path.relative_to(ROOT)} is missing: {FIX}"
    assert path.read_text(encoding="utf-8") == make(), (
        f"{path.relative_to(ROOT)} differs from the code: {FIX}")


def test_every_setting_and_command_is_on_its_page() -> None:
    from typer.main import get_command

    from graphmem.cli import app
    from graphmem.config import Settings

    settings = GEN.settings_page()
    missing = [n for n in Settings.model_fields if f"`GRAPHMEM_{n.upper()}`" not in settings]
    assert missing == []
    cli = GEN.cli_page()
    root = get_command(app)
    assert all(f"## graphmem {name}\n" in cli for name in root.commands)  # type: ignore[attr-defined]


def test_cells_cannot_break_a_table_or_open_html() -> None:
    assert GEN.cell("a | b <c> *d*\n e") == "a \\| b &lt;c> \\*d\\* e"
