# The graphmem API image (used by docker-compose.yml): the wheel is built in a first stage and
# installed with the server extra; CPU-only torch keeps the image small.
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY graphmem ./graphmem
COPY api ./api
COPY cypher ./cypher
RUN pip wheel --no-cache-dir --no-deps -w /dist .

FROM python:3.11-slim
RUN pip install --no-cache-dir torch --index-url https://download.pytorch.org/whl/cpu
COPY --from=wheel /dist /dist
RUN pip install --no-cache-dir "$(ls /dist/graphmem-*.whl)[server]" && rm -rf /dist
WORKDIR /app
ENV HF_HUB_OFFLINE=1
# Export the int8 ONNX model into the image's cache once, not at every container start.
RUN python -c "from graphmem.config import Settings; from graphmem.embeddings import embedder_for; embedder_for(Settings())"
EXPOSE 8000
CMD ["graphmem", "serve"]
