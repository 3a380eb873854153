# The graphmem API image (used by docker-compose.yml). CPU-only torch keeps the image small.
FROM python:3.11-slim
WORKDIR /app
RUN pip install --no-cache-dir torch --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md ./
COPY graphmem ./graphmem
COPY api ./api
COPY cypher ./cypher
RUN pip install --no-cache-dir -e .  # editable: the cypher/ folder is read from the source tree
ENV HF_HUB_OFFLINE=1
# Export the int8 ONNX model into the image's cache once, not at every container start.
RUN python -c "from graphmem.config import Settings; from graphmem.embeddings import embedder_for; embedder_for(Settings())"
EXPOSE 8000
CMD ["graphmem", "serve"]
