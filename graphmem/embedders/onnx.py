"""BERT-style embedding models from Maven Central jars on ONNX Runtime: e5-small-v2 (mean
pooling, ``query: `` / ``passage: `` prefixes) and bge-small-en-v1.5 (the [CLS] vector, an
instruction before queries only). Both give 384 normalised dimensions. The jars come from
`graphmem.embedders.maven`; ``quantize`` picks the jar's int8 twin (dynamic quantization).

Queries and stored texts are embedded differently (the models were trained that way), so this
embedder has ``embed_query`` beside ``embed``; `graphmem.embeddings.query_vectors` uses it."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from graphmem import metrics
from graphmem.embedders.maven import Artifact, fetch

WINDOW = 256
"""Word pieces read per text, prefix and special tokens included: the same window as the
default MiniLM model, so `max_batch_tokens` bounds the same work (the models read up to 512)."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    pooling: Literal["mean", "cls"]
    query_prefix: str
    passage_prefix: str
    fp32: Artifact | None = None
    int8: Artifact | None = None
    order: Literal["tokens", "characters"] = "tokens"
    """How a call's texts are ordered into batches, longest first (texts padded together
    influence each other's int8 activations a little: `characters` is sentence-transformers'
    order, so its vectors are reproduced exactly)."""


def _jar(artifact: str, file: str) -> Artifact:
    return Artifact("dev.langchain4j", f"langchain4j-embeddings-{artifact}", "0.36.2", file)


MODELS: dict[str, ModelSpec] = {
    "e5-small-v2": ModelSpec(
        "e5-small-v2", "mean", "query: ", "passage: ",
        _jar("e5-small-v2", "e5-small-v2"), _jar("e5-small-v2-q", "e5-small-v2-q")),
    "bge-small-en-v1.5": ModelSpec(
        "bge-small-en-v1.5", "cls", "Represent this sentence for searching relevant passages: ",
        "", _jar("bge-small-en-v15", "bge-small-en-v1.5"),
        _jar("bge-small-en-v15-q", "bge-small-en-v1.5-q")),
}
"""Model weights: MIT (intfloat/e5-small-v2, BAAI/bge-small-en-v1.5); the jars: Apache-2.0."""

MINILM = ModelSpec("all-MiniLM-L6-v2", "mean", "", "", order="characters")
"""The packaged all-MiniLM-L6-v2 (Apache-2.0) in its int8 export
(`graphmem.embeddings.int8_onnx_model`), read here as sentence-transformers reads it (mean
pooling, window 256, its batch order), without importing torch: a process starts ~9 s sooner."""

Matrix = npt.NDArray[np.float32]


class OnnxEmbedder:
    """One `ModelSpec` on ONNX Runtime (CPU), normalised vectors, thread-safe."""

    def __init__(self, spec: ModelSpec, model: Path, tokenizer: Path, name: str,
                 batch_size: int = 32) -> None:
        """``spec``'s model from an ONNX file and a ``tokenizer.json`` on disk."""
        import onnxruntime as ort
        from tokenizers import Tokenizer  # type: ignore[import-untyped]

        from graphmem.embedders.runtime import ort_options

        self.spec = spec
        self._name = name
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=WINDOW)
        self._session = ort.InferenceSession(str(model), ort_options(),
                                             providers=["CPUExecutionProvider"])
        # one search query on one thread: the same time as on two for a text that short, at
        # 4.3 instead of 7.3 ms of CPU (2 cores); and a search no longer waits for the lock
        # while a batch of stored texts is being embedded. The batches of a call of several
        # run on it too, side by side (`_encode`)
        self._one_thread = ort.InferenceSession(str(model), ort_options(threads=1),
                                                providers=["CPUExecutionProvider"])
        self._workers = max(1, min(4, len(os.sched_getaffinity(0))
                                   if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0
        # the word pieces of the last texts counted on each thread: ingest counts a batch
        # (its budget) just before embedding it, and tokenizing twice cost 8% of ingest time
        self._counted = threading.local()
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._dims = int(self._session.get_outputs()[0].shape[-1])

    @classmethod
    def from_maven(cls, spec: ModelSpec, cache_dir: Path, quantize: bool = True,
                   batch_size: int = 32) -> OnnxEmbedder:
        """``spec``'s model from its Maven jar (fetched into ``cache_dir`` once); ``quantize``
        picks the int8 jar."""
        artifact = spec.int8 if quantize else spec.fp32
        if artifact is None:
            raise ValueError(f"{spec.name} has no {'int8' if quantize else 'fp32'} jar")
        folder = fetch(artifact, cache_dir)
        return cls(spec, folder / "model.onnx", folder / "tokenizer.json",
                   f"{spec.name}+int8" if quantize else spec.name, batch_size)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimensions(self) -> int:
        return self._dims

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each stored text as the model reads it (prefix and special tokens
        included, cut at `WINDOW`)."""
        if not texts:
            return []
        prefixed = [self.spec.passage_prefix + t for t in texts]
        encodings = self._tokenizer.encode_batch(prefixed)
        self._counted.last = (prefixed, encodings)
        return [len(e.ids) for e in encodings]

    def _tokenize(self, texts: list[str]) -> list[Any]:
        """The encodings of ``texts``: those this thread counted last when they are the same
        texts (taken once), else tokenized now."""
        last = getattr(self._counted, "last", None)
        self._counted.last = None
        if last is not None and last[0] == texts:
            encodings: list[Any] = last[1]
            return encodings
        if len(texts) == 1:  # a search's query: the batch call hands it to a thread pool,
            return [self._tokenizer.encode(texts[0])]  # a wait on a busy machine
        fresh: list[Any] = self._tokenizer.encode_batch(texts)
        return fresh

    @metrics.observe_embedding
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of texts to store (passages)."""
        return self._encode([self.spec.passage_prefix + t for t in texts])

    @metrics.observe_embedding
    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of search queries (each on one thread, not waiting for a batch of stored
        texts being embedded)."""
        return self._encode([self.spec.query_prefix + t for t in texts], query=True)

    def _encode(self, texts: list[str], query: bool = False) -> list[list[float]]:
        if not texts:
            return []
        encodings = self._tokenize(texts)
        # longest first, in batches: little padding (as sentence-transformers does)
        if self.spec.order == "characters":
            order = [int(i) for i in np.argsort([-len(t) for t in texts])]
        else:
            order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out = np.zeros((len(texts), self._dims), dtype=np.float32)
        chunks = [order[i:i + self._batch_size] for i in range(0, len(order), self._batch_size)]

        def run(session: Any, chunk: list[int]) -> None:
            out[chunk] = self._run(session, [encodings[i].ids for i in chunk])

        if query:  # on one thread, never waiting for a batch of stored texts
            for chunk in chunks:
                run(self._one_thread, chunk)
        elif len(chunks) == 1 or self._workers == 1:  # one batch: its operators over the cores
            with self._lock:
                for chunk in chunks:
                    run(self._session, chunk)
        else:
            # several batches: side by side, each on one thread (the same batches, so the same
            # vectors). Small matrices split across threads cost their synchronisation: LoCoMo
            # dev's 8,277 sentences took 7.7-8.2 s and 15-16 s of CPU this way, 9.6-11.8 s and
            # 17-21 s of CPU with two threads per batch
            with self._lock:
                list(self._batch_pool().map(lambda c: run(self._one_thread, c), chunks))
        rows: list[list[float]] = out.tolist()
        return rows

    def _batch_pool(self) -> ThreadPoolExecutor:
        """The threads that run a call's batches side by side (one per core; made on first
        use, under the batch lock, and again in a forked process, where threads do not
        follow)."""
        if self._pool is None or self._pool_pid != os.getpid():
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="graphmem-embed")
            self._pool_pid = os.getpid()
        return self._pool

    def span_vectors(self, text: str, spans: Sequence[tuple[int, int]]) -> list[list[float] | None]:
        """Vectors of parts of one stored text from a single pass over the whole of it: per
        ``(start, end)`` character span, the mean of the last hidden states of the word pieces
        inside it, normalised; None for a span the window cuts off. Each part is read in the
        context of the whole text, and costs no pass of its own (late chunking)."""
        prefix = len(self.spec.passage_prefix)
        encoding = self._tokenizer.encode(self.spec.passage_prefix + text)
        hidden = self._hidden(self._one_thread, [encoding.ids])[0][0]  # as a query: no batch lock
        inside = [(a - prefix, b - prefix) for a, b in encoding.offsets]
        out: list[list[float] | None] = []
        for start, end in spans:  # special tokens have no characters, the prefix's are < 0
            rows = [i for i, (a, b) in enumerate(inside) if b > a and a >= start and b <= end]
            vector = normalise(hidden[rows].mean(axis=0, keepdims=True))[0] if rows else None
            out.append(None if vector is None else [float(x) for x in vector])
        return out

    def _run(self, session: Any, ids: list[list[int]]) -> Matrix:
        hidden, mask = self._hidden(session, ids)
        return normalise(pool(hidden, mask, self.spec.pooling))

    def _hidden(self, session: Any, ids: list[list[int]]) -> tuple[Any, npt.NDArray[np.int64]]:
        """The last hidden states of a batch of word-piece ids (padded), and its mask."""
        width = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, x in enumerate(ids):
            input_ids[row, :len(x)] = x
            mask[row, :len(x)] = 1
        feed: dict[str, Any] = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        return np.asarray(session.run(None, feed)[0], dtype=np.float32), mask


def pool(hidden: Matrix, mask: npt.NDArray[np.int64], how: Literal["mean", "cls"]) -> Matrix:
    """One vector per text from the last hidden states: the mean over real tokens, or the first
    ([CLS]) token's."""
    if how == "cls":
        return hidden[:, 0, :]
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    counts = np.maximum(weights.sum(axis=1), 1e-9)
    out: Matrix = summed / counts
    return out


def normalise(m: Matrix) -> Matrix:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    out: Matrix = m / np.maximum(norms, 1e-12)
    return out
