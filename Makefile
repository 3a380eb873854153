# graphmem: two commands on a fresh machine (Python 3.11+, Java 17+, Maven; no Docker needed)
#   make run    set everything up, start Neo4j, load the demo memory, serve the API (with a
#               worker in the API process that forms episodes: `graphmem demo --no-worker` not)
#   make test   set everything up and run the whole test suite (unit + integration on a real Neo4j)
#   make run LLM=local   the same demo, formed by a local LLM (llama.cpp + Qwen2.5-Coder-1.5B,
#               assembled and built into ~/.cache/graphmem/llm the first time)
#   make test-llm        the tests against that local LLM (pytest marker `llm`)
#   make docs            serve the documentation site on http://127.0.0.1:8001 (mkdocs.yml, docs/)
#   make docs-build      build it into site/ as CI does (mkdocs build --strict: a warning fails)
#   make ts-pack         the TypeScript client as an npm tarball, dist/graphmem-client-*.tgz

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# mypy's cache outside the checkout: a fresh clone checks in seconds what takes two minutes
# cold (mypy re-checks every file whose content differs from the cached one).
MYPY_CACHE ?= $(HOME)/.cache/graphmem/mypy

.PHONY: setup run test unit integration integration-2026 integration-5.26 lint bench neo4j-start neo4j-stop \
	llm-start llm-stop test-llm docs docs-build docs-reference ts-pack clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py
	@command -v java >/dev/null || { echo "Java 17+ is needed (apt-get install openjdk-17-jre-headless)"; exit 1; }
	@command -v mvn >/dev/null || { echo "Maven is needed (apt-get install maven)"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# uv (from PyPI) downloads in parallel and installs from its cache (~/.cache/uv): about a
	@# minute on a fresh machine, seconds after that; pip takes 4+ minutes (torch and its CUDA
	@# wheels are 3 GB). pip does it alone if uv cannot be had.
	($(BIN)/pip install --quiet uv && $(BIN)/uv pip install --quiet --native-tls \
		--python $(BIN)/python -e ".[server,dev]") || $(BIN)/pip install --quiet -e ".[server,dev]"
	@touch $(STAMP)

run: setup
ifeq ($(LLM),local)
	eval "$$($(BIN)/graphmem llm start)" && $(BIN)/graphmem demo
else
	$(BIN)/graphmem demo
endif

test: setup lint
	HF_HUB_OFFLINE=1 $(BIN)/pytest -q --durations=25

unit: setup
	HF_HUB_OFFLINE=1 $(BIN)/pytest -q tests/unit

integration: setup
	HF_HUB_OFFLINE=1 $(BIN)/pytest -q tests/integration

# The tests of what differs between Neo4j lines (the vector schema, every vector search with its
# SEARCH variant, tenant isolation through both) on one line: `make test` runs the default
# (2026.x when a Java 21+ is found, else 5.26); these run either.
NEO4J_2026 ?= 2026.08.1
NEO4J_5 ?= 5.26.30
LINE_TESTS := schema search windows episode_search facts procedural access vector_filters forget \
	metadata_filter forget_matching export
integration-2026: setup
	GRAPHMEM_TEST_NEO4J_VERSION=$(NEO4J_2026) HF_HUB_OFFLINE=1 $(BIN)/pytest -q \
		$(LINE_TESTS:%=tests/integration/test_%.py)

integration-5.26: setup
	GRAPHMEM_TEST_NEO4J_VERSION=$(NEO4J_5) HF_HUB_OFFLINE=1 $(BIN)/pytest -q \
		$(LINE_TESTS:%=tests/integration/test_%.py)

lint: setup
	$(BIN)/ruff check graphmem api tests scripts
	$(BIN)/mypy --cache-dir $(MYPY_CACHE)

bench: setup
	HF_HUB_OFFLINE=1 $(BIN)/graphmem neo4j start
	HF_HUB_OFFLINE=1 $(BIN)/graphmem bench locomo --data ../shared/data/locomo/locomo_dev.json --json bench-out.json

test-llm: setup
	$(BIN)/graphmem llm start >/dev/null
	HF_HUB_OFFLINE=1 $(BIN)/pytest -q -m llm tests/integration/test_llm_local.py

llm-start: setup
	$(BIN)/graphmem llm start

llm-stop: setup
	$(BIN)/graphmem llm stop

# The documentation site (Material for MkDocs). It builds offline: no web fonts, no plugin that
# downloads; the settings and CLI reference pages are generated from the code (docs-reference).
export NO_MKDOCS_2_WARNING := 1
docs: setup
	$(BIN)/mkdocs serve

docs-build: setup
	$(BIN)/mkdocs build --strict --site-dir site

docs-reference: setup
	HF_HUB_OFFLINE=1 $(BIN)/python scripts/gen_docs_reference.py

ts-pack: setup
	PYTHON=$(abspath $(BIN))/python scripts/ts_pack.sh

neo4j-start: setup
	$(BIN)/graphmem neo4j start

neo4j-stop: setup
	$(BIN)/graphmem neo4j stop

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
