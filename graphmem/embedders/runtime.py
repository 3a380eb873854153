"""ONNX Runtime session options shared by every ONNX embedding model (MiniLM through
sentence-transformers, e5 and bge through `graphmem.embedders.onnx`)."""

from __future__ import annotations

from typing import Any


def ort_options(threads: int = 0) -> Any:
    """ONNX Runtime session options. Its worker threads spin after each call by default, which
    on a small machine takes the CPU Neo4j needs to commit the batch just embedded: measured on
    LoCoMo dev (2 cores), turning spinning off cut the embedding process's CPU by a quarter and
    raised pipelined ingest from 142 / 176 / 213 to 177 / 212 / 252 messages/s (first three passes
    after Neo4j started)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.intra_op_num_threads = threads  # 0: ONNX Runtime's choice (one per core)
    return opts
