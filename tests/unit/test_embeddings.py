"""The local embedding model on each backend: ONNX Runtime gives the torch vectors, int8 on ONNX
Runtime stays close to them and is exported once into the cache. No services; the packaged model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphmem.config import PACKAGED_MODEL, Settings
from graphmem.embeddings import (
    SentenceTransformerEmbedder,
    describe,
    embedder_for,
    int8_onnx_model,
    quant_arch,
)

TEXTS = [
    "Caroline: I went to the LGBTQ support group yesterday.",
    "Melanie: We took the kids camping at the lake last weekend!",
    "Caroline: I'm planning to study counseling next year.",
    "Melanie: Painting sunsets relaxes me after work.",
]
QUERY = "When did Melanie go camping?"


def _vectors(e: SentenceTransformerEmbedder, texts: list[str]) -> np.ndarray:
    return np.array(e.embed(texts))


@pytest.fixture(scope="module")
def fp32() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(PACKAGED_MODEL, backend="onnx")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


def test_onnx_gives_the_torch_vectors(fp32: SentenceTransformerEmbedder) -> None:
    torch = SentenceTransformerEmbedder(PACKAGED_MODEL, backend="torch")
    assert (fp32.backend, torch.backend) == ("onnx", "torch")
    assert fp32.name == torch.name == PACKAGED_MODEL and fp32.dimensions == 384
    cos = (_vectors(fp32, TEXTS) * _vectors(torch, TEXTS)).sum(axis=1)
    assert cos.min() > 0.99999


def test_int8_onnx_is_close_and_keeps_the_ranking(
    fp32: SentenceTransformerEmbedder, cache: Path
) -> None:
    int8 = SentenceTransformerEmbedder(PACKAGED_MODEL, quantize=True, cache_dir=cache)
    assert (int8.backend, int8.name) == ("onnx", f"{PACKAGED_MODEL}+int8")
    ref, got = _vectors(fp32, TEXTS), _vectors(int8, TEXTS)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-4)  # normalised
    assert (ref * got).sum(axis=1).min() > 0.95
    q_ref, q_got = _vectors(fp32, [QUERY])[0], _vectors(int8, [QUERY])[0]
    assert int(np.argmax(got @ q_got)) == int(np.argmax(ref @ q_ref)) == 1


@pytest.mark.parametrize(("backend", "quantize"),
                         [("onnx", False), ("onnx", True), ("torch", True)])
def test_a_query_gets_exactly_the_vector_embed_gives(
    backend: str, quantize: bool, cache: Path
) -> None:
    model = SentenceTransformerEmbedder(PACKAGED_MODEL, quantize=quantize, backend=backend,
                                        cache_dir=cache)
    for text in [QUERY, *TEXTS]:  # one text: the short path, bit for bit
        assert model.embed_query([text]) == model.embed([text])
    assert model.embed_query(TEXTS) == model.embed(TEXTS)  # several: `embed` itself


def test_int8_export_is_made_once_and_reused(cache: Path) -> None:
    folder, file_name = int8_onnx_model(PACKAGED_MODEL, cache)
    model_file = folder / file_name
    stamp = model_file.stat().st_mtime_ns
    assert (folder, file_name) == int8_onnx_model(PACKAGED_MODEL, cache)
    assert model_file.stat().st_mtime_ns == stamp
    arch = quant_arch()  # unsigned weights on AVX2 (no VNNI), signed elsewhere
    assert file_name == f"onnx/model_{'quint8' if arch == 'avx2' else 'qint8'}_{arch}.onnx"
    assert not (folder / "onnx" / "model.onnx").exists()  # the fp32 export is not kept
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []  # no leftovers


def test_onnx_threads_do_not_spin_between_calls(
    fp32: SentenceTransformerEmbedder, cache: Path
) -> None:
    """Spinning worker threads would take the CPU Neo4j needs during a pipelined ingest."""
    int8 = SentenceTransformerEmbedder(PACKAGED_MODEL, quantize=True, cache_dir=cache)
    for e in (fp32, int8):
        session = e._model[0].auto_model.model  # the ONNX Runtime InferenceSession
        options = session.get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(OSError, match="GRAPHMEM_EMBEDDING_CACHE_DIR"):
        int8_onnx_model(PACKAGED_MODEL, blocker / "models")


def test_torch_int8_is_another_model_name() -> None:
    e = SentenceTransformerEmbedder(PACKAGED_MODEL, backend="torch", quantize=True)
    assert (e.backend, e.name) == ("torch", f"{PACKAGED_MODEL}+int8-torch")


def test_quant_arch_names_an_onnx_runtime_config() -> None:
    assert quant_arch() in {"arm64", "avx2", "avx512", "avx512_vnni"}


def test_count_tokens_uses_the_models_tokenizer_up_to_its_window(
    fp32: SentenceTransformerEmbedder,
) -> None:
    short, long = fp32.count_tokens(["Caroline: hello there.", "word " * 1000])
    assert 4 <= short <= 10  # [CLS] caroline : hello there . [SEP]
    assert long == 256  # the model's window: the rest is never read
    assert fp32.count_tokens([]) == []


@pytest.mark.parametrize("quantize", [False, True])
def test_describe_tells_the_loaded_models_name_and_dimensions(quantize: bool) -> None:
    settings = Settings(embedding_quantize=quantize)
    e = embedder_for(settings)
    assert describe(settings) == (e.name, e.dimensions)
    assert describe(Settings(embedding_model="some/other-model")) is None
    assert describe(Settings(embedder="e5-small-v2")) == ("e5-small-v2+int8", 384)
    assert describe(Settings(embedder="bge-small-en-v1.5", embedding_quantize=False)) == (
        "bge-small-en-v1.5", 384)


def test_query_memo_embeds_each_query_once() -> None:
    from graphmem.embeddings import QueryMemo

    class Counting:
        name, dimensions, calls = "counting", 2, 0

        def embed(self, texts: list[str]) -> list[list[float]]:
            self.calls += 1
            return [[float(len(t)), 1.0] for t in texts]

    model = Counting()
    memo = QueryMemo.of(model)  # type: ignore[arg-type]
    assert QueryMemo.of(memo) is memo
    assert memo.embed_query(["ab", "ab"]) == [[2.0, 1.0], [2.0, 1.0]]
    assert memo.embed_query(["ab"]) == [[2.0, 1.0]] and model.calls == 1
    assert memo.embed(["abc"]) == [[3.0, 1.0]] and model.calls == 2  # documents: not memoised


def test_query_memo_embeds_a_query_once_for_searches_side_by_side() -> None:
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from graphmem.embeddings import QueryMemo

    class Slow:
        name, dimensions = "slow", 2

        def __init__(self) -> None:
            self.calls = 0

        def embed(self, texts: list[str]) -> list[list[float]]:
            self.calls += 1
            time.sleep(0.05)
            return [[float(len(t)), 1.0] for t in texts]

    model = Slow()
    memo = QueryMemo.of(model)  # type: ignore[arg-type]
    start = threading.Barrier(3)

    def search() -> list[list[float]]:
        start.wait()
        return memo.embed_query(["the question"])

    with ThreadPoolExecutor(3) as pool:
        vectors = [f.result() for f in [pool.submit(search) for _ in range(3)]]
    assert vectors == [[[12.0, 1.0]]] * 3 and model.calls == 1


def test_the_default_model_gives_sentence_transformers_vectors_without_torch(cache: Path) -> None:
    """The default (packaged MiniLM, int8, ONNX Runtime) runs without sentence-transformers and
    torch: a process that embeds starts seconds sooner, with the same vectors."""
    settings = Settings(embedding_cache_dir=cache)
    ours = embedder_for(settings)
    theirs = SentenceTransformerEmbedder(PACKAGED_MODEL, quantize=True, cache_dir=cache)
    assert (ours.name, ours.dimensions) == (theirs.name, theirs.dimensions)
    texts = [*TEXTS, "word " * 600, "Hi!"]  # one batch: padded together, as theirs pads
    assert np.abs(np.array(ours.embed(texts)) - _vectors(theirs, texts)).max() < 1e-6
    assert ours.embed_query([QUERY]) == ours.embed([QUERY])
    assert np.abs(np.array(ours.embed_query([QUERY])) - _vectors(theirs, [QUERY])).max() < 1e-6
    assert ours.count_tokens(texts) == theirs.count_tokens(texts)
    code = ("import sys; from graphmem.config import Settings; from graphmem.embeddings import "
            f"embedder_for; e = embedder_for(Settings(embedding_cache_dir={str(cache)!r})); "
            "e.embed(['hi']); print(sorted({'torch', 'sentence_transformers', 'transformers'} "
            "& set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
